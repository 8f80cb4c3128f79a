#include "core/kernels/activation.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/kernels/fast_math.hpp"
#include "core/parallel.hpp"

namespace normlab {
namespace {
constexpr int64_t kChunk = 4096;
}

template <typename T>
void activation_forward(Activation a, const T* x, T* y, int64_t n) {
  parallel_for(shard_count(n, kChunk), [&](int64_t s) {
    const int64_t end = std::min(n, (s + 1) * kChunk);
    if (a == Activation::relu) {
      for (int64_t i = s * kChunk; i < end; ++i) y[i] = x[i] > T(0) ? x[i] : T(0);
    } else {
      const T inv_sqrt2 = T(1 / std::numbers::sqrt2);
      for (int64_t i = s * kChunk; i < end; ++i) {
        y[i] = T(0.5) * x[i] * (T(1) + erf_approx(x[i] * inv_sqrt2));
      }
    }
  });
}

template <typename T>
void activation_backward(Activation a, const T* x, const T* dy, T* dx, int64_t n) {
  parallel_for(shard_count(n, kChunk), [&](int64_t s) {
    const int64_t end = std::min(n, (s + 1) * kChunk);
    if (a == Activation::relu) {
      for (int64_t i = s * kChunk; i < end; ++i) dx[i] = x[i] > T(0) ? dy[i] : T(0);
    } else {
      const T inv_sqrt2 = T(1 / std::numbers::sqrt2);
      const T inv_sqrt2pi = T(1 / std::sqrt(2 * std::numbers::pi));
      for (int64_t i = s * kChunk; i < end; ++i) {
        const T cdf = T(0.5) * (T(1) + erf_approx(x[i] * inv_sqrt2));
        const T pdf = exp_approx(T(-0.5) * x[i] * x[i]) * inv_sqrt2pi;
        dx[i] = dy[i] * (cdf + x[i] * pdf);
      }
    }
  });
}

template void activation_forward<float>(Activation, const float*, float*, int64_t);
template void activation_forward<double>(Activation, const double*, double*, int64_t);
template void activation_backward<float>(Activation, const float*, const float*, float*, int64_t);
template void activation_backward<double>(Activation, const double*, const double*, double*,
                                          int64_t);

}  // namespace normlab
