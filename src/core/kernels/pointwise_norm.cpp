#include "core/kernels/pointwise_norm.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/parallel.hpp"
#include "core/scratch.hpp"

namespace normlab {
// Named, not anonymous: GCC warns (-Wsubobject-linkage) when the kernels' lambdas, in
// functions of external linkage, capture a type of internal linkage.
namespace detail {

// The function of one kind with its scalars: f(u) with u = α·x (dyt) or u = α·x + s (derf).
template <typename T>
struct Pointwise {
  bool derf = false;
  T alpha = 1, shift = 0;

  Pointwise(NormKind kind, const T* scalars)
      : derf(kind == NormKind::derf), alpha(scalars[0]), shift(derf ? scalars[1] : T(0)) {}

  T u(T x) const { return derf ? alpha * x + shift : alpha * x; }
  T f(T u) const { return derf ? std::erf(u) : std::tanh(u); }
  // f'(u) given f(u): 1 − tanh²(u), or 2/√π · exp(−u²).
  T derivative(T u, T fu) const {
    return derf ? T(2 / std::sqrt(std::numbers::pi)) * std::exp(-u * u) : T(1) - fu * fu;
  }
};

}  // namespace detail

template <typename T>
void pointwise_norm_forward(NormKind kind, const T* x, const T* gain, const T* bias,
                            const T* scalars, T* y, int64_t N, int D) {
  const detail::Pointwise<T> p(kind, scalars);
  for_row_shards(N, [&](int64_t s, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const T* xr = x + n * D;
      T* yr = y + n * D;
      for (int i = 0; i < D; ++i) yr[i] = p.f(p.u(xr[i])) * gain[i] + bias[i];
    }
  });
}

template <typename T>
void pointwise_norm_backward(NormKind kind, const T* x, const T* gain, const T* scalars,
                             const T* dy, T* dx, T* dgain, T* dbias, T* dscalars, int64_t N,
                             int D) {
  const detail::Pointwise<T> p(kind, scalars);
  const int64_t shards = shard_count(N);
  // Per-shard partial parameter gradients, summed in shard order afterwards: Σ dy ⊙ f(u) in
  // [0, D) and Σ dy in [D, 2D) of a shard's slice; the scalar sums Σ e ⊙ x and Σ e (over rows
  // and features, so in double) in its two doubles.
  T* partial_base = zeroed_scratch<T>(ScratchUse::pointwise_partial, shards * 2 * D);
  double* scalar_base = zeroed_scratch<double>(ScratchUse::pointwise_scalar_partial, shards * 2);
  for_row_shards(N, [&](int64_t s, int64_t n0, int64_t n1) {
    T* pg = partial_base + s * 2 * D;
    T* pb = pg + D;
    double ex = 0, e_sum = 0;
    for (int64_t n = n0; n < n1; ++n) {
      const T* xr = x + n * D;
      const T* dyr = dy + n * D;
      T* dxr = dx + n * D;
      for (int i = 0; i < D; ++i) {
        const T u = p.u(xr[i]);
        const T fu = p.f(u);
        const T e = dyr[i] * gain[i] * p.derivative(u, fu);  // dL/du
        dxr[i] += p.alpha * e;
        pg[i] += dyr[i] * fu;
        pb[i] += dyr[i];
        ex += static_cast<double>(e) * static_cast<double>(xr[i]);
        e_sum += static_cast<double>(e);
      }
    }
    scalar_base[2 * s] = ex;
    scalar_base[2 * s + 1] = e_sum;
  });
  double dalpha = 0, dshift = 0;
  for (int64_t s = 0; s < shards; ++s) {
    const T* pg = partial_base + s * 2 * D;
    for (int i = 0; i < D; ++i) dgain[i] += pg[i];
    for (int i = 0; i < D; ++i) dbias[i] += pg[D + i];
    dalpha += scalar_base[2 * s];
    dshift += scalar_base[2 * s + 1];
  }
  dscalars[0] += static_cast<T>(dalpha);
  if (p.derf) dscalars[1] += static_cast<T>(dshift);
}

template void pointwise_norm_forward<float>(NormKind, const float*, const float*, const float*,
                                            const float*, float*, int64_t, int);
template void pointwise_norm_forward<double>(NormKind, const double*, const double*, const double*,
                                             const double*, double*, int64_t, int);
template void pointwise_norm_backward<float>(NormKind, const float*, const float*, const float*,
                                             const float*, float*, float*, float*, float*, int64_t,
                                             int);
template void pointwise_norm_backward<double>(NormKind, const double*, const double*, const double*,
                                              const double*, double*, double*, double*, double*,
                                              int64_t, int);

}  // namespace normlab
