// Multi-head softmax attention over a packed q|k|v buffer, forward and backward.
//
// Letters: B batch, T length, D width, H heads, dh = D / H head dimension.
// qkv (B, T, 3D): row t holds q (D) | k (D) | v (D); head h uses columns [h·dh, (h+1)·dh).
//   S_ij = scale · ⟨q_i, k_j⟩ [+ m_h · bias(i, j) with ALiBi, alibi.hpp],  scale = beta / sqrt(dh);
//   j ≤ i when causal; with relative terms (relative.hpp) S_ij = scale · A_ij instead

//   P_ij = softmax_j(S_ij),     o_i = Σ_j P_ij v_j
// Backward (per head):
//   dP_ij = ⟨do_i, v_j⟩,  dS_ij = P_ij (dP_ij − Σ_k P_ik dP_ik)
//   dq_i = scale Σ_j dS_ij k_j,  dk_j = scale Σ_i dS_ij q_i,  dv_j = Σ_i P_ij do_i
#pragma once

#include <cstdint>

#include "core/kernels/dropout.hpp"
#include "core/kernels/relative.hpp"

namespace normlab {

struct AttentionShape {
  int64_t batch;  // B
  int64_t len;    // T
  int width;      // D
  int heads;      // H
  bool causal;
  double scale;        // beta / sqrt(dh)
  bool alibi = false;  // add ALiBi's bias to the scaled logits (alibi.hpp)
};

// Dropout of the probabilities in training (dropout.hpp): o_i = Σ_j P_ij m_ij v_j / (1 − p), the
// mask m_ij of element ((b·H + h)·T + i)·T + j of `site`. probs keeps P itself; the backward
// applies the same mask to dP and to P in dv.
struct AttentionDropout {
  double p = 0;
  uint64_t key = 0;
  uint64_t site = 0;
  uint64_t index(int64_t b, int h, int heads, int64_t len, int64_t i, int64_t j) const {
    return static_cast<uint64_t>(((b * heads + h) * len + i) * len + j);
  }
  bool keeps(int64_t b, int h, int heads, int64_t len, int64_t i, int64_t j) const {
    return dropout_keeps(key, site, index(b, h, heads, len, i, j), p);
  }
  // What a kept P_ij is multiplied by: 1 / (1 − p).
  double keep_factor() const { return 1.0 / (1.0 - p); }
  // What P_ij is multiplied by: m_ij / (1 − p).
  double factor(int64_t b, int h, int heads, int64_t len, int64_t i, int64_t j) const {
    return keeps(b, h, heads, len, i, j) ? keep_factor() : 0.0;
  }
};

// Row stride of the stored probabilities: T rounded up to a multiple of 16.
int64_t attention_probs_stride(int64_t len);

// o (B, T, D) overwritten; probs (B, H, T, Tp) overwritten, Tp = attention_probs_stride(T);
// masked and padding entries are 0. `relative`: Transformer-XL's terms (relative.hpp), or null.
template <typename T>
void attention_forward(const AttentionShape& s, const T* qkv, T* o, T* probs,
                       const RelativeLogits<T>* relative = nullptr,
                       const AttentionDropout* dropout = nullptr);

// dqkv (B, T, 3D) overwritten with the gradient of q, k and v; probs as attention_forward
// wrote them. With `relative`, its gradients are written to `d_relative` (both or neither).
template <typename T>
void attention_backward(const AttentionShape& s, const T* qkv, const T* probs, const T* d_o,
                        T* dqkv, const RelativeLogits<T>* relative = nullptr,
                        const RelativeGrads<T>* d_relative = nullptr,
                        const AttentionDropout* dropout = nullptr);

}  // namespace normlab
