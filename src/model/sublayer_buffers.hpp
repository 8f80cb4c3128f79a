// Where one sublayer's forward writes, and how its attention is computed: the one sublayer
// forward (Model::branch_forward, Model::add_forward) serves the training pass, whose buffers
// are kept for backward, and the inference pass, which reuses one set for every sublayer.
//
// Letters: N input rows (= B·T), R output rows (R = N, except after attention that computes
// listed query rows only), D width, M MLP hidden width, H heads.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kernels/rope.hpp"
#include "model/residual/qkv_hook.hpp"

namespace normlab {

// A null pointer where the sublayer's slots do not need a buffer.
template <typename T>
struct SublayerBuffers {
  T* u = nullptr;                                // (N, D) s · N_in(x)
  T *in_mean = nullptr, *in_rstd = nullptr;      // (N) N_in's statistics
  T* qkv_raw = nullptr;                          // (N, 3D) before the head norms (nGPT: after
                                                 // RoPE, before the q/k norms)
  T* qkv = nullptr;                              // (N, 3D) after the head norms and RoPE
  T* q_normed = nullptr;                         // (N, D) q̂ before s_h (l2 QK-norm)
  T *head_mean = nullptr, *head_rstd = nullptr;  // (3, N·H) the head norms' statistics
  T* attn_o = nullptr;                           // (R, D) heads concatenated
  T* hidden_raw = nullptr;                       // (N, M) nGPT: before s_uv; null: in place
  T *hidden_pre = nullptr, *hidden = nullptr;    // (N, M) MLP before/after activation
  T* y = nullptr;                                // (R, D) f(u)
  T *z = nullptr, *out_mean = nullptr, *out_rstd = nullptr;    // (R, D) N_out(y), (R)
  T *r = nullptr, *post_mean = nullptr, *post_rstd = nullptr;  // (R, D) add before N_post
  T *xhat = nullptr, *x_mean = nullptr, *x_rstd = nullptr;     // (R, D) nGPT's N_x(x), (R)
  const RopeTable<T>* rope = nullptr;                          // (T, dh) RoPE's factors
  QkvHook<T>* qkv_hook = nullptr;                              // the pass's (qkv_hook.hpp)
};

// How attention is computed. Full: every query row, the probabilities (B, H, T, Tp) kept for
// backward (core/kernels/attention.hpp). Streaming: an online softmax over key blocks for the
// listed query rows only, O(N·D) memory (core/kernels/attention_stream.hpp).
template <typename T>
struct AttentionStrategy {
  bool streams = false;                 // false: full
  T* probs = nullptr;                   // full: where the probabilities go
  const int64_t* query_rows = nullptr;  // streaming: R ascending rows n = b·T + t
  int64_t query_count = 0;              // streaming: R

  static AttentionStrategy full(T* probs) {
    AttentionStrategy s;
    s.probs = probs;
    return s;
  }
  static AttentionStrategy streaming(const int64_t* rows, int64_t count) {
    AttentionStrategy s;
    s.streams = true;
    s.query_rows = rows;
    s.query_count = count;
    return s;
  }
};

// v's data, or null for an empty vector (a buffer the slots do not need).
template <typename T>
T* data_or_null(std::vector<T>& v) {
  return v.empty() ? nullptr : v.data();
}

}  // namespace normlab
