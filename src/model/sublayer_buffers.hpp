// Where one sublayer's forward writes, the one list of those buffers with their shapes, and how
// its attention is computed: the one sublayer forward (Model::branch_forward, Model::add_forward)
// serves the training pass, whose buffers are kept for backward, and the inference pass, which
// reuses one set for every sublayer.
//
// Letters: N input rows (= B·T), R output rows (R = N, except after attention that computes
// listed query rows only), D width, M MLP hidden width, H heads.
#pragma once

#include <cstdint>
#include <span>

#include "core/kernels/attention.hpp"
#include "core/kernels/relative.hpp"
#include "core/kernels/rope.hpp"
#include "model/residual/qkv_hook.hpp"
#include "normlab/model/model_config.hpp"
#include "normlab/model/scheme.hpp"

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
  T* probs = nullptr;                            // (B, H, T, Tp) training: kept for backward
  T* attn_o = nullptr;                           // (R, D) heads concatenated
  T* hidden_raw = nullptr;                       // (N, M) nGPT: before s_uv; null: in place
  T *hidden_pre = nullptr, *hidden = nullptr;    // (N, M) MLP before/after activation
  T* y = nullptr;                                // (R, D) f(u)
  T *z = nullptr, *out_mean = nullptr, *out_rstd = nullptr;  // (R, D) N_out(y), (R)
  T* dropped = nullptr;  // (R, D) training with dropout: the output after dropout (dropout.hpp)
  T *r = nullptr, *post_mean = nullptr, *post_rstd = nullptr;  // (R, D) add before N_post
  T *xhat = nullptr, *x_mean = nullptr, *x_rstd = nullptr;     // (R, D) nGPT's N_x(x), (R)
  const RopeTable<T>* rope = nullptr;                          // (T, dh) RoPE's factors
  const T* rel_table = nullptr;  // (2T − 1, D) pos relative: p_δ (relative.hpp), set once carved
  T* rel_keys = nullptr;         // (2T − 1, D) pos relative: r_δ = W_R p_δ, kept for backward
  QkvHook<T>* qkv_hook = nullptr;  // the pass's (qkv_hook.hpp)
};

// What decides sublayer i's buffers: its slots and kind, the pass, and its rows.
struct SublayerShape {
  int i = 0;
  bool attention = false;
  bool training = false;  // training keeps what backward reads; inference only what f writes
  int64_t batch = 0, len = 0;
  int64_t rows = 0;      // N input rows
  int64_t out_rows = 0;  // R output rows (training: N)
};

// Every buffer of sublayer i with its element count, as declare(slot, count) (arena.hpp); a
// count of 0 where the sublayer does not need the buffer. Training (Model::ensure_workspace),
// inference (Model::forward_rows) and the memory estimate (activation_bytes_estimate) all read
// this list.
template <typename T, typename Declare>
void declare_sublayer_buffers(SublayerBuffers<T>& b, const ModelConfig& c, const ResolvedScheme& s,
                              const SublayerShape& shape, Declare&& declare) {
  const SublayerSlots& slots = s.sublayers[shape.i];
  const int64_t N = shape.rows, R = shape.out_rows, D = c.width, M = c.mlp_hidden(), H = c.heads;
  const bool attention = shape.attention, mlp = !shape.attention, training = shape.training;
  const bool head_norms = attention && s.head_norms.any();
  const bool sphere_qk = attention && s.sphere_qk;  // nGPT: q|k|v after RoPE, 1/|q|, 1/|k|
  const bool partial_sum = training && !s.res_continues.empty() && s.res_continues[shape.i];
  declare(b.u, slots.norm_in || slots.input_scale != 1.0 ? N * D : 0);
  declare(b.in_mean, slots.norm_in ? N : 0);
  declare(b.in_rstd, slots.norm_in ? N : 0);
  declare(b.qkv, attention ? N * 3 * D : 0);
  declare(b.qkv_raw, head_norms || sphere_qk ? N * 3 * D : 0);
  declare(b.head_mean, head_norms ? 3 * N * H : 0);
  declare(b.head_rstd, head_norms ? 3 * N * H : sphere_qk ? 2 * N * H : 0);
  declare(b.q_normed, training && head_norms && s.head_norms.learned_scale ? N * D : 0);
  declare(b.probs, training && attention
                       ? shape.batch * H * shape.len * attention_probs_stride(shape.len)
                       : 0);
  declare(b.attn_o, attention ? R * D : 0);
  declare(b.rel_keys,
          attention && c.pos == PosEncoding::relative ? relative_rows(shape.len) * D : 0);
  declare(b.hidden_pre, mlp ? N * M : 0);
  declare(b.hidden, mlp ? N * M : 0);
  declare(b.hidden_raw, training && mlp && s.mlp_scale ? N * M : 0);
  declare(b.y, R * D);
  declare(b.z, slots.norm_out ? R * D : 0);
  declare(b.out_mean, slots.norm_out ? R : 0);
  declare(b.out_rstd, slots.norm_out ? R : 0);
  declare(b.dropped, training && c.dropout > 0 ? R * D : 0);
  declare(b.r, slots.norm_post || partial_sum ? R * D : 0);  // AttnRes: the block's partial sum
  declare(b.post_mean, slots.norm_post ? R : 0);
  declare(b.post_rstd, slots.norm_post ? R : 0);
  declare(b.xhat, slots.interpolate ? R * D : 0);  // nGPT's N_x(x)
  declare(b.x_mean, slots.interpolate ? R : 0);
  declare(b.x_rstd, slots.interpolate ? R : 0);
}

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

// v's data, or null for an empty buffer (one the slots do not need).
template <typename T>
T* data_or_null(std::span<T> v) {
  return v.empty() ? nullptr : v.data();
}

}  // namespace normlab
