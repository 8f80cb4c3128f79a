// Small helpers of the model's buffers: sizing a workspace vector, reading a parameter offset
// that may be absent, and a norm's tensors as the norm kernels take them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kernels/norm.hpp"
#include "normlab/model.hpp"

namespace normlab {

// v grows to at least n values and never shrinks: a workspace buffer is sized for the largest
// shape seen, and holds whatever an earlier call left in it. Nothing may rely on its values
// before writing them, nor on its size (kernels are given their element counts). With lengths
// drawn per batch the shape changes almost every step; a buffer resized to each shape was
// zero-filled on every regrowth, ~3% of a Tomita study's time (docs/performance-log.md,
// "Workspace buffers that only grow").
template <typename T>
void grow(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(n);
}

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
