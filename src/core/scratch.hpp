// Scratch memory of the kernels (docs/design.md principle 5: no allocation in the hot loop).
// Each use has one buffer per thread that grows to the largest request and is then reused, so
// a kernel called every step allocates only when a larger shape arrives. Every use is listed
// in ScratchUse, so that no kernel keeps a hidden buffer of its own; two uses never share a
// buffer, so a kernel may hold several at once.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace normlab {

enum class ScratchUse {
  attention_head,          // attention.cpp: one head's q, k, v (and gradients) of a batch
  attention_stream_block,  // attention_stream.cpp: one key block's scores and an output row
  attention_relative,      // attention.cpp: one head's relative keys by column, and gradients
  attention_dropped,       // attention.cpp: one head's probabilities after dropout
  attnres_query,           // attnres.cpp: q = w ⊙ g (D)
  attnres_queries,         // attnres.cpp: q_p = w_p ⊙ g_p of P points (P, D)
  attnres_partial,         // attnres.cpp: per-shard partial dq (shards, P, D)
  attnres_row_dots,        // attnres.cpp: ⟨dx_p, x_p⟩ of a shard's rows (P, kRowShard)
  attnres_shard_logits,    // attnres.cpp: a shard's logits, then weights, by source (K, kRowShard)
  attnres_logit_rows,      // attnres.cpp: where each of P points' logits of a shard go (P pointers)
  norm_partial,            // norm.cpp: per-shard partial gain and bias gradients
  norm_scale_partial,      // norm.cpp: per-shard partial scalenorm scale gradient
  pointwise_partial,       // pointwise_norm.cpp: per-shard partial gain and bias gradients
  pointwise_scalar_partial,  // pointwise_norm.cpp: per-shard partial α and shift gradients
  head_norm_gathered,        // head_norm.cpp: one part of qkv gathered by head (N·H, dh)
  head_norm_normed,          // head_norm.cpp: the normalized part, or the gathered input
  head_norm_gradient,        // head_norm.cpp: the gradient of the gathered input
  small_linear_weight,       // small_linear.cpp: the weight, transposed or padded (C, pad16(OC))
  small_linear_input,        // small_linear.cpp: the input padded to 16 columns (R, pad16(C))
  linear_weight_partial,     // gemm.cpp: the weight gradient's lanes 1.. (lanes-1, OC, C)
  bias_partial,              // gemm.cpp: per-shard partial bias gradients (shards, OC)
  gemm_a_panels,             // gemm.cpp: a last, partial tile row of op(A), packed (kRows, kc)
  gemm_b_panels,             // gemm.cpp: a block of op(B) packed in tile columns (kc, kColBlock)
  gemm_b_whole,              // gemm.cpp: op(B) packed whole, shared by a call's row shards (K, N)
  gemm_b_whole_transposed,   // gemm.cpp: linear_by_shards's weight^T packed whole (C, OC)
  linear_shard_blocks,       // gemm.cpp: linear_by_shards's blocks of y, then dy (jobs, 256, OC)
  cross_entropy_row,         // cross_entropy.cpp: one row's exp(z − max) (V)
  cross_entropy_partial,     // cross_entropy.cpp: per-shard partial losses (shards), double
  readout_loss_partial,      // model.cpp: the readout's loss per shard (shards), double
  count
};

// n values of `use`'s buffer of the calling thread; their contents are unspecified. The
// pointer stays valid until the same thread asks for more of the same use.
template <typename T>
T* scratch(ScratchUse use, int64_t n) {
  thread_local std::array<std::vector<T>, static_cast<size_t>(ScratchUse::count)> buffers;
  std::vector<T>& buffer = buffers[static_cast<size_t>(use)];
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(n);
  return buffer.data();
}

// The same, with the n values set to zero.
template <typename T>
T* zeroed_scratch(ScratchUse use, int64_t n) {
  T* p = scratch<T>(use, n);
  std::fill(p, p + n, T(0));
  return p;
}

}  // namespace normlab
