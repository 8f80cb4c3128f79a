#include "core/kernels/cross_entropy.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/dot.hpp"
#include "core/kernels/fast_math.hpp"
#include "core/parallel.hpp"

namespace normlab {
namespace {

template <typename T>
T* row_scratch(int64_t n) {
  thread_local std::vector<T> buffer;
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(n);
  return buffer.data();
}

}  // namespace

template <typename T>
double cross_entropy(const T* logits, const T* target, const T* weight, T* dlogits, int64_t N,
                     int V, const int32_t* target_slot) {
  double total_weight = 0;
  for (int64_t n = 0; n < N; ++n) total_weight += weight[n];
  const int64_t shards = shard_count(N);
  thread_local std::vector<double> partial;
  partial.assign(shards, 0.0);
  double* partial_base = partial.data();
  const double inv_total = total_weight > 0 ? 1.0 / total_weight : 0.0;
  parallel_for(shards, [&](int64_t s) {
    const int64_t end = std::min(N, (s + 1) * kRowShard);
    double shard_loss = 0;
    for (int64_t n = s * kRowShard; n < end; ++n) {
      const T* z = logits + n * V;
      const T w = weight[n];
      const int64_t slot = target_slot != nullptr ? target_slot[n] : n;
      T* dz = dlogits != nullptr ? dlogits + n * V : nullptr;
      if (w == T(0) || slot < 0) {
        if (dz != nullptr) std::fill(dz, dz + V, T(0));
        continue;
      }
      const T* p = target + slot * V;
      const T zmax = max_lanes(z, V);
      // e_v = exp(z_v − max) once, kept in dz (or a row of scratch) for the gradient.
      T* e = dz != nullptr ? dz : row_scratch<T>(V);
      for (int v = 0; v < V; ++v) e[v] = exp_approx(z[v] - zmax);
      // Sums in 16 lanes (dot.hpp): a running sum over v would be one chain of V dependent adds.
      const T sum = sum_lanes(e, V), psum = sum_lanes(p, V), pz = dot_lanes(p, z, V);
      const T lse = zmax + std::log(sum);
      shard_loss += static_cast<double>(w) * static_cast<double>(lse * psum - pz);
      if (dz != nullptr) {
        const T scale = w * T(inv_total);
        const T softmax_scale = psum / sum;
        for (int v = 0; v < V; ++v) dz[v] = (e[v] * softmax_scale - p[v]) * scale;
      }
    }
    partial_base[s] = shard_loss;
  });
  double loss = 0;
  for (int64_t s = 0; s < shards; ++s) loss += partial_base[s];
  return loss * inv_total;
}

template double cross_entropy<float>(const float*, const float*, const float*, float*, int64_t, int,
                                     const int32_t*);
template double cross_entropy<double>(const double*, const double*, const double*, double*, int64_t,
                                      int, const int32_t*);

}  // namespace normlab
