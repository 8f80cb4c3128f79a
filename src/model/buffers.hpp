// Small helpers of the model's parameter buffers: reading an offset that may be absent, and a
// norm's tensors as the norm kernels take them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kernels/norm.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

// The tensor at `offset` of a flat parameter (or gradient) buffer; null for offset −1.
template <typename T>
const T* param_ptr(const std::vector<T>& p, int64_t offset) {
  return offset < 0 ? nullptr : p.data() + offset;
}

template <typename T>
T* param_ptr(std::vector<T>& p, int64_t offset) {
  return offset < 0 ? nullptr : p.data() + offset;
}

// A norm's tensors in the flat parameter buffer, as the norm kernels take them (norm.hpp).
template <typename T>
NormWeights<T> norm_weights(const std::vector<T>& params, const NormParams& n) {
  return {n.kind, param_ptr(params, n.gain), param_ptr(params, n.bias),
          param_ptr(params, n.scalars)};
}

// The same norm's tensors in the flat gradient buffer.
template <typename T>
NormGrads<T> norm_grads(std::vector<T>& grads, const NormParams& n) {
  return {param_ptr(grads, n.gain), param_ptr(grads, n.bias), param_ptr(grads, n.scalars)};
}

}  // namespace normlab
