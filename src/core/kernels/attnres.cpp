#include "core/kernels/attnres.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/dot.hpp"
#include "core/parallel.hpp"

namespace normlab {
namespace {

// q = w ⊙ g (D), in a buffer of the calling thread.
template <typename T>
const T* query_times_gain(const T* w, const T* g, int D) {
  thread_local std::vector<T> q;
  q.resize(D);
  for (int d = 0; d < D; ++d) q[d] = w[d] * g[d];
  return q.data();
}

}  // namespace

template <typename T>
void res_rstd(const T* s, T* r, int64_t N, int D, double eps) {
  parallel_for(shard_count(N), [&](int64_t sh) {
    const int64_t end = std::min(N, (sh + 1) * kRowShard);
    for (int64_t n = sh * kRowShard; n < end; ++n) {
      const T* row = s + n * D;
      T ss = 0;
      for (int d = 0; d < D; ++d) ss += row[d] * row[d];
      r[n] = T(1) / std::sqrt(ss / T(D) + T(eps));
    }
  });
}

template <typename T>
void res_mix_forward(const T* const* src, const T* const* rstd, int K, const T* w, const T* g, T* x,
                     T* alpha, int64_t N, int D) {
  const T* q = query_times_gain(w, g, D);
  parallel_for(shard_count(N), [&](int64_t sh) {
    const int64_t end = std::min(N, (sh + 1) * kRowShard);
    for (int64_t n = sh * kRowShard; n < end; ++n) {
      T* a = alpha + n * K;
      T m = -INFINITY;
      for (int k = 0; k < K; ++k) {
        a[k] = rstd[k][n] * dot_lanes(q, src[k] + n * D, D);
        m = std::max(m, a[k]);
      }
      T sum = 0;
      for (int k = 0; k < K; ++k) sum += a[k] = std::exp(a[k] - m);
      const T inv = T(1) / sum;
      for (int k = 0; k < K; ++k) a[k] *= inv;
      T* xr = x + n * D;
      const T* s0 = src[0] + n * D;
      for (int d = 0; d < D; ++d) xr[d] = a[0] * s0[d];
      for (int k = 1; k < K; ++k) {
        const T* sk = src[k] + n * D;
        const T ak = a[k];
        for (int d = 0; d < D; ++d) xr[d] += ak * sk[d];
      }
    }
  });
}

template <typename T>
void res_mix_backward(const T* const* src, const T* const* rstd, int K, const T* w, const T* g,
                      const T* alpha, const T* dx, T* const* dsrc, T* dw, T* dg, int64_t N, int D) {
  const T* q = query_times_gain(w, g, D);
  const int64_t shards = shard_count(N);
  // Per-shard partial dq, summed in shard order afterwards.
  thread_local std::vector<T> partial;
  partial.assign(shards * D, T(0));
  T* partial_base = partial.data();
  const T inv_d = T(1) / T(D);
  parallel_for(shards, [&](int64_t sh) {
    thread_local std::vector<T> scratch;  // dα_k, ℓ_k of one row
    scratch.resize(2 * K);
    T* da = scratch.data();
    T* logit = da + K;
    T* dq = partial_base + sh * D;
    const int64_t end = std::min(N, (sh + 1) * kRowShard);
    for (int64_t n = sh * kRowShard; n < end; ++n) {
      const T* a = alpha + n * K;
      const T* dxr = dx + n * D;
      T c = 0;
      for (int k = 0; k < K; ++k) {
        const T* sk = src[k] + n * D;
        da[k] = dot_lanes(dxr, sk, D);
        logit[k] = rstd[k][n] * dot_lanes(q, sk, D);
        c += a[k] * da[k];
      }
      for (int k = 0; k < K; ++k) {
        const T* sk = src[k] + n * D;
        T* dsk = dsrc[k] + n * D;
        const T r = rstd[k][n];
        const T dl = a[k] * (da[k] - c);  // dℓ_k
        const T cq = dl * r;              // coefficient of q, and of s_k in dq
        const T cs = -cq * r * logit[k] * inv_d;
        const T ak = a[k];
        for (int d = 0; d < D; ++d) {
          dsk[d] += ak * dxr[d] + cq * q[d] + cs * sk[d];
          dq[d] += cq * sk[d];
        }
      }
    }
  });
  for (int64_t sh = 0; sh < shards; ++sh) {
    const T* part = partial_base + sh * D;
    for (int d = 0; d < D; ++d) {
      dw[d] += part[d] * g[d];
      dg[d] += part[d] * w[d];
    }
  }
}

#define NORMLAB_INSTANTIATE(T)                                                                    \
  template void res_rstd<T>(const T*, T*, int64_t, int, double);                                  \
  template void res_mix_forward<T>(const T* const*, const T* const*, int, const T*, const T*, T*, \
                                   T*, int64_t, int);                                             \
  template void res_mix_backward<T>(const T* const*, const T* const*, int, const T*, const T*,    \
                                    const T*, const T*, T* const*, T*, T*, int64_t, int);
NORMLAB_INSTANTIATE(float)
NORMLAB_INSTANTIATE(double)
#undef NORMLAB_INSTANTIATE

}  // namespace normlab
