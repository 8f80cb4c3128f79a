// Cross-entropy against a sparse target distribution at each scored position.
//
// Letters: N rows of logits, V vocabulary, R targets, E target entries. Target r is the list of
// its nonzero entries (token t_k, probability p_k), k ∈ [offsets[r], offsets[r + 1]), tokens
// ascending and distinct (the layout of Batch's targets, include/normlab/base/batch.hpp); every
// other token has probability 0. Row n's target is r = slot[n].
//
// logits: (N, V); weight: (N), 0 for unscored positions (1 for scored, or any weight).
//   loss = Σ_n w_n · Σ_k −p_k log softmax(z_n)_{t_k}  /  Σ_n w_n
//        = Σ_n w_n · (lse(z_n) · Σ_k p_k − Σ_k p_k z_{n,t_k})  /  Σ_n w_n
//   dz_nv = w_n · (softmax(z_n)_v · Σ_k p_k − p_nv) / Σ_n w_n,  p_nv = p_k if v = t_k, else 0
// With Σ_n w_n = 0 the loss and gradient are 0.
//
// The entries are added into the 16-lane blocks of the logits they fall in, so every sum is
// formed in the same order as over a dense (V) target row: the results are those of the dense
// formula, bit for bit, without the row.
#pragma once

#include <cstdint>

namespace normlab {

template <typename T>
struct SparseTargets {
  const int32_t* slot = nullptr;     // (N) row n → its target r (−1: none, which requires
                                     // weight 0); null: r = n
  const int64_t* offsets = nullptr;  // (R + 1)
  const int32_t* tokens = nullptr;   // (E) ascending and distinct within a target
  const T* probs = nullptr;          // (E)
};

// Returns the loss and writes dlogits (N, V) (overwritten; may be null to skip it). The rows
// go in row shards (core/parallel.hpp): cross_entropy_rows of each, their sums added in shard
// order, times cross_entropy_inv_total.
template <typename T>
double cross_entropy(const T* logits, const SparseTargets<T>& target, const T* weight, T* dlogits,
                     int64_t N, int V);

// 1 / Σ_n w_n over the N rows, summed in row order (0 when the sum is 0).
template <typename T>
double cross_entropy_inv_total(const T* weight, int64_t N);

// Rows [n0, n1) of cross_entropy alone: their gradient rows, dlogits (n1 − n0, V), and
// sum + Σ_n w_n · (row n's loss term), added in row order, not yet divided by Σ w (a row
// shard's sum from 0, or from its earlier rows' sum). logits and dlogits point at row n0's
// (dlogits may be null; it may be logits itself); target and weight are indexed by the row
// n. inv_total: cross_entropy_inv_total of all N rows.
template <typename T>
double cross_entropy_rows(const T* logits, const SparseTargets<T>& target, const T* weight,
                          T* dlogits, int64_t n0, int64_t n1, int V, double inv_total,
                          double sum = 0.0);

}  // namespace normlab
