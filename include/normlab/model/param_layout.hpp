// Where every parameter tensor lives in one flat buffer.
//
// Parameters, gradients, AdamW moments and EMA/BEMA copies all share this layout, so an
// optimizer step or an average is a loop over one array, and a checkpoint is the list of
// tensors with their names (docs/checkpoint.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace normlab {

enum class InitKind {
  normal,            // N(0, init_value²)
  constant,          // every element init_value
  values,            // element k is init_values[k] (hyper-connections' static weights)
  truncated_normal,  // N(0, init_value²) truncated at ±2·init_value, not rescaled (Haiku's)
};

// nGPT keeps the vectors along the model-width axis at unit norm (docs/reference.md §1).
enum class UnitNormAxis {
  none,
  last,  // each row (..., D) has unit norm: embeddings, q/k/v, MLP up, unembedding
  first  // each column (D, ...) has unit norm: attention output, MLP down
};

struct TensorSpec {
  std::string name{};            // checkpoint name, e.g. "layers.0.attn.q.weight"
  std::vector<int64_t> shape{};  // row-major
  int64_t offset = 0;            // first element in the flat buffer
  int64_t size = 0;              // number of elements
  bool decay = false;            // AdamW weight decay applies (matrices, not gains/biases)
  InitKind init = InitKind::normal;
  double init_value = 0.0;            // std (the normals) or value (constant)
  std::vector<double> init_values{};  // InitKind::values: one per element
  UnitNormAxis unit_norm = UnitNormAxis::none;
};

class ParamLayout {
 public:
  // Appends a tensor; returns its offset.
  int64_t add(TensorSpec spec);
  const std::vector<TensorSpec>& tensors() const { return tensors_; }
  int64_t total() const { return total_; }
  // Null when absent.
  const TensorSpec* find(const std::string& name) const;

 private:
  std::vector<TensorSpec> tensors_;
  int64_t total_ = 0;
};

}  // namespace normlab
