#include "core/kernels/cross_entropy.hpp"

#include <algorithm>
#include <cmath>

#include "core/kernels/block16.hpp"
#include "core/kernels/fast_math.hpp"
#include "core/parallel.hpp"
#include "core/scratch.hpp"

namespace normlab {
namespace {

// A row's target entries in the block of 16 tokens starting at `begin`, as a dense block
// (zeros elsewhere): the entries from k on (up to k_end) whose tokens are below begin + 16,
// advancing k past them.
template <typename T>
Block16<T> target_entries_block(const SparseTargets<T>& target, int64_t& k, int64_t k_end,
                                int64_t begin) {
  Block16<T> pb = {};
  for (; k < k_end && target.tokens[k] < begin + kBlock; ++k) {
    pb[target.tokens[k] - begin] += target.probs[k];
  }
  return pb;
}

// cross_entropy's row for R scored rows n .. n + R − 1 of at most 16 logits (V ≤ 16): the
// general loop's operations on its single block, stage by stage over the R rows so that their
// chains (maximum, exp, lane sums, log) run side by side. Each row's loss is added to
// shard_loss in row order, as the general loop does.
// z and dz point at row n's logits and gradient (dz may be null).
template <int R, typename T>
void one_block_rows(const T* z, const SparseTargets<T>& target, const T* weight, T* dz, int64_t n,
                    int V, double inv_total, double& shard_loss) {
  const Block16<T> lanes = lane_indices<T>();
  Block16<T> zb[R], eb[R], pb[R];
  T zmax[R], sum[R], psum[R], pz[R];
  for (int r = 0; r < R; ++r) {
    zb[r] = load_first(z + r * V, V);
    Block16<T> zmax_lanes = Block16<T>{} - T(INFINITY);
    zmax_lanes = where_less(lanes, Block16<T>{} + T(V),
                            where_less(zmax_lanes, zb[r], zb[r], zmax_lanes), zmax_lanes);
    zmax[r] = max_of_lanes<T>(zmax_lanes);
  }
  for (int r = 0; r < R; ++r) {
    const int64_t slot = target.slot != nullptr ? target.slot[n + r] : n + r;
    int64_t k = target.offsets[slot];
    const int64_t k_end = target.offsets[slot + 1];
    const bool has_entries = k < k_end;
    pb[r] = target_entries_block(target, k, k_end, 0);
    const Block16<T> e = exp_approx_lanes<T>(zb[r] - zmax[r]);
    eb[r] = where_less(lanes, Block16<T>{} + T(V), e,
                       Block16<T>{});  // e_v stays in a register for the gradient
    Block16<T> sum_lanes = {}, psum_lanes = {}, pz_lanes = {};
    sum_lanes += eb[r];
    if (has_entries) {
      psum_lanes += pb[r];
      pz_lanes += pb[r] * zb[r];
    }
    sum[r] = sum_of_lanes<T>(sum_lanes);
    psum[r] = sum_of_lanes<T>(psum_lanes);
    pz[r] = sum_of_lanes<T>(pz_lanes);
  }
  for (int r = 0; r < R; ++r) {
    const T lse = zmax[r] + std::log(sum[r]);
    shard_loss += static_cast<double>(weight[n + r]) * static_cast<double>(lse * psum[r] - pz[r]);
  }
  if (dz == nullptr) return;
  for (int r = 0; r < R; ++r) {
    const T scale = weight[n + r] * T(inv_total);
    const T softmax_scale = psum[r] / sum[r];
    // The product is rounded before the target is subtracted, as in the general loop (where
    // the target's block is formed between them).
    const Block16<T> g = (multiply_rounded<T>(eb[r], Block16<T>{} + softmax_scale) - pb[r]) * scale;
    store_first(dz + r * V, V, g);
  }
}

}  // namespace

template <typename T>
double cross_entropy_inv_total(const T* weight, int64_t N) {
  double total_weight = 0;
  for (int64_t n = 0; n < N; ++n) total_weight += weight[n];
  return total_weight > 0 ? 1.0 / total_weight : 0.0;
}

template <typename T>
double cross_entropy_rows(const T* logits, const SparseTargets<T>& target, const T* weight,
                          T* dlogits, int64_t n0, int64_t n1, int V, double inv_total, double sum) {
  const Block16<T> lanes = lane_indices<T>();
  double shard_loss = sum;
  // Rows of at most 16 logits go four at a time while all four are scored.
  constexpr int kGroup = 4;
  auto scored = [&](int64_t n) {
    return weight[n] != T(0) && (target.slot == nullptr || target.slot[n] >= 0);
  };
  for (int64_t n = n0; n < n1; ++n) {
    const T* z = logits + (n - n0) * V;
    T* dz = dlogits != nullptr ? dlogits + (n - n0) * V : nullptr;
    if (V <= kBlock && n + kGroup <= n1 && scored(n) && scored(n + 1) && scored(n + 2) &&
        scored(n + 3)) {
      one_block_rows<kGroup>(z, target, weight, dz, n, V, inv_total, shard_loss);
      n += kGroup - 1;
      continue;
    }
    const T w = weight[n];
    const int64_t slot = target.slot != nullptr ? target.slot[n] : n;
    if (w == T(0) || slot < 0) {
      if (dz != nullptr) std::fill(dz, dz + V, T(0));
      continue;
    }
    const int64_t k_begin = target.offsets[slot], k_end = target.offsets[slot + 1];
    // The target's entries in block b as a dense block (zeros elsewhere); `k` walks the
    // ascending entries once per pass over the blocks.
    int64_t k = k_begin;
    auto target_block = [&](int64_t b) { return target_entries_block(target, k, k_end, b); };
    // Blocks of 16 logits (block16.hpp), the last one partial; lanes beyond V are masked out
    // of the maximum and the sums, which are 16 lane sums reduced pairwise (dot.hpp's order).
    Block16<T> zmax_lanes = Block16<T>{} - T(INFINITY);
    for (int64_t b = 0; b < V; b += kBlock) {
      const Block16<T> zb = load_first(z + b, V - b);
      zmax_lanes = where_less(lanes, Block16<T>{} + T(V - b),
                              where_less(zmax_lanes, zb, zb, zmax_lanes), zmax_lanes);
    }
    const T zmax = max_of_lanes<T>(zmax_lanes);
    // e_v = exp(z_v − max) once, kept in dz (or a row of scratch) for the gradient.
    T* e = dz != nullptr ? dz : scratch<T>(ScratchUse::cross_entropy_row, V);
    Block16<T> sum_lanes = {}, psum_lanes = {}, pz_lanes = {};
    for (int64_t b = 0; b < V; b += kBlock) {
      const Block16<T> zb = load_first(z + b, V - b);
      const Block16<T> eb =
          where_less(lanes, Block16<T>{} + T(V - b), exp_approx_lanes<T>(zb - zmax), Block16<T>{});
      store_first(e + b, V - b, eb);
      sum_lanes += eb;
      // Blocks without entries add exact zeros to psum and pz, so they are skipped.
      if (k < k_end && target.tokens[k] < b + kBlock) {
        const Block16<T> pb = target_block(b);
        psum_lanes += pb;
        pz_lanes += pb * zb;
      }
    }
    const T sum = sum_of_lanes<T>(sum_lanes), psum = sum_of_lanes<T>(psum_lanes);
    const T pz = sum_of_lanes<T>(pz_lanes);
    const T lse = zmax + std::log(sum);
    shard_loss += static_cast<double>(w) * static_cast<double>(lse * psum - pz);
    if (dz != nullptr) {
      const T scale = w * T(inv_total);
      const T softmax_scale = psum / sum;
      k = k_begin;
      for (int64_t b = 0; b < V; b += kBlock) {
        const Block16<T> g = (load_first(e + b, V - b) * softmax_scale - target_block(b)) * scale;
        store_first(dz + b, V - b, g);
      }
    }
  }
  return shard_loss;
}

template <typename T>
double cross_entropy(const T* logits, const SparseTargets<T>& target, const T* weight, T* dlogits,
                     int64_t N, int V) {
  const int64_t shards = shard_count(N);
  double* partial_base = zeroed_scratch<double>(ScratchUse::cross_entropy_partial, shards);
  const double inv_total = cross_entropy_inv_total(weight, N);
  for_row_shards(N, [&](int64_t s, int64_t n0, int64_t n1) {
    partial_base[s] =
        cross_entropy_rows(logits + n0 * V, target, weight,
                           dlogits != nullptr ? dlogits + n0 * V : nullptr, n0, n1, V, inv_total);
  });
  double loss = 0;
  for (int64_t s = 0; s < shards; ++s) loss += partial_base[s];
  return loss * inv_total;
}

template double cross_entropy_inv_total<float>(const float*, int64_t);
template double cross_entropy_inv_total<double>(const double*, int64_t);
template double cross_entropy_rows<float>(const float*, const SparseTargets<float>&, const float*,
                                          float*, int64_t, int64_t, int, double, double);
template double cross_entropy_rows<double>(const double*, const SparseTargets<double>&,
                                           const double*, double*, int64_t, int64_t, int, double,
                                           double);
template double cross_entropy<float>(const float*, const SparseTargets<float>&, const float*,
                                     float*, int64_t, int);
template double cross_entropy<double>(const double*, const SparseTargets<double>&, const double*,
                                      double*, int64_t, int);

}  // namespace normlab
