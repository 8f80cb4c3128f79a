#include "core/kernels/norm.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.hpp"

namespace normlab {
namespace {

bool centered(NormKind k) {
  return k == NormKind::layernorm || k == NormKind::standardize;
}

}  // namespace

bool norm_has_gain(NormKind k) {
  return k == NormKind::layernorm || k == NormKind::rmsnorm;
}
bool norm_has_bias(NormKind k) {
  return k == NormKind::layernorm;
}

template <typename T>
void norm_forward(NormKind kind, const T* x, const T* gain, const T* bias, T* y, T* mean, T* rstd,
                  int64_t N, int D, double eps) {
  const bool center = centered(kind);
  const T divisor = kind == NormKind::l2 ? T(1) : T(D);
  const bool has_gain = norm_has_gain(kind);
  const bool has_bias = norm_has_bias(kind);
  parallel_for(shard_count(N), [&](int64_t s) {
    const int64_t end = std::min(N, (s + 1) * kRowShard);
    for (int64_t n = s * kRowShard; n < end; ++n) {
      const T* xr = x + n * D;
      T* yr = y + n * D;
      T mu = 0;
      if (center) {
        for (int i = 0; i < D; ++i) mu += xr[i];
        mu /= T(D);
      }
      T ss = 0;
      for (int i = 0; i < D; ++i) ss += (xr[i] - mu) * (xr[i] - mu);
      const T r = T(1) / std::sqrt(ss / divisor + T(eps));
      mean[n] = mu;
      rstd[n] = r;
      for (int i = 0; i < D; ++i) {
        T v = (xr[i] - mu) * r;
        if (has_gain) v *= gain[i];
        if (has_bias) v += bias[i];
        yr[i] = v;
      }
    }
  });
}

template <typename T>
void norm_backward(NormKind kind, const T* x, const T* gain, const T* mean, const T* rstd,
                   const T* dy, T* dx, T* dgain, T* dbias, int64_t N, int D) {
  const bool center = centered(kind);
  const T divisor = kind == NormKind::l2 ? T(1) : T(D);
  const bool has_gain = norm_has_gain(kind);
  const bool has_bias = norm_has_bias(kind);
  const int64_t shards = shard_count(N);
  // Per-shard partial parameter gradients, summed in shard order afterwards.
  thread_local std::vector<T> partial;
  const int64_t width = has_gain ? 2 * D : 0;
  if (width > 0) partial.assign(shards * width, T(0));
  T* partial_base = partial.data();
  parallel_for(shards, [&](int64_t s) {
    T* part = width > 0 ? partial_base + s * width : nullptr;
    const int64_t end = std::min(N, (s + 1) * kRowShard);
    for (int64_t n = s * kRowShard; n < end; ++n) {
      const T* xr = x + n * D;
      const T* dyr = dy + n * D;
      const T mu = mean[n];
      const T r = rstd[n];
      T g_mean = 0, gx_mean = 0;
      for (int i = 0; i < D; ++i) {
        const T xhat = (xr[i] - mu) * r;
        const T g = has_gain ? dyr[i] * gain[i] : dyr[i];
        g_mean += g;
        gx_mean += g * xhat;
        if (part != nullptr) {
          part[i] += dyr[i] * xhat;
          part[D + i] += dyr[i];
        }
      }
      g_mean /= T(D);
      gx_mean /= divisor;
      T* dxr = dx + n * D;
      for (int i = 0; i < D; ++i) {
        const T xhat = (xr[i] - mu) * r;
        const T g = has_gain ? dyr[i] * gain[i] : dyr[i];
        T v = g - xhat * gx_mean;
        if (center) v -= g_mean;
        dxr[i] += r * v;
      }
    }
  });
  if (width > 0) {
    for (int64_t s = 0; s < shards; ++s) {
      const T* part = partial_base + s * width;
      for (int i = 0; i < D; ++i) dgain[i] += part[i];
      if (has_bias) {
        for (int i = 0; i < D; ++i) dbias[i] += part[D + i];
      }
    }
  }
}

template void norm_forward<float>(NormKind, const float*, const float*, const float*, float*,
                                  float*, float*, int64_t, int, double);
template void norm_forward<double>(NormKind, const double*, const double*, const double*, double*,
                                   double*, double*, int64_t, int, double);
template void norm_backward<float>(NormKind, const float*, const float*, const float*, const float*,
                                   const float*, float*, float*, float*, int64_t, int);
template void norm_backward<double>(NormKind, const double*, const double*, const double*,
                                    const double*, const double*, double*, double*, double*,
                                    int64_t, int);

}  // namespace normlab
