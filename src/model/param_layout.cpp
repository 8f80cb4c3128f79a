#include "normlab/model/param_layout.hpp"

namespace normlab {

int64_t ParamLayout::add(TensorSpec spec) {
  int64_t size = 1;
  for (int64_t d : spec.shape) size *= d;
  spec.offset = total_;
  spec.size = size;
  total_ += size;
  tensors_.push_back(std::move(spec));
  return tensors_.back().offset;
}

const TensorSpec* ParamLayout::find(const std::string& name) const {
  for (const TensorSpec& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace normlab
