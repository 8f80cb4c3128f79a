// Small helpers of the model's buffers: reading an offset that may be absent, a norm's tensors
// as the norm kernels take them, and one part of a packed q|k|v buffer.
#pragma once

#include <algorithm>
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

// The hook names of the parts of q|k|v (activation_hooks.hpp), in their order.
inline constexpr const char* kQkvHookNames[3] = {"hook_q", "hook_k", "hook_v"};

// Part `part` (0 q, 1 k, 2 v) of a packed q|k|v buffer (N, 3D), as its own (N, D).
template <typename T>
std::vector<T> qkv_part(const T* qkv, int part, int64_t N, int D) {
  std::vector<T> out(N * D);
  for (int64_t n = 0; n < N; ++n) {
    std::copy_n(qkv + n * 3 * D + part * D, D, out.data() + n * D);
  }
  return out;
}

}  // namespace normlab
