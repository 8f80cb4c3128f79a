#include "core/kernels/activation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <type_traits>

#include "core/kernels/fast_math.hpp"
#include "core/parallel.hpp"

namespace normlab {
namespace {
constexpr int64_t kChunk = 4096;  // values per task; a multiple of kBlock

// gelu and gelu' of one value or of 16 at once (V a Block16): the same operations lane by lane.
// The loops below run whole blocks through the Block16 form and the rest through the scalar
// one, so the bits are the same either way and on every CPU; written as a scalar loop, GCC
// vectorizes it only where it can turn the selects into mask registers (AVX-512), leaving it
// scalar, and a fifth of an MLP model's step, on AVX2.
template <typename T, typename V>
V gelu(V x) {
  const T inv_sqrt2 = T(1 / std::numbers::sqrt2);
  if constexpr (std::is_same_v<V, T>) {
    return T(0.5) * x * (T(1) + erf_approx(x * inv_sqrt2));
  } else {
    return T(0.5) * x * (T(1) + erf_approx_lanes<T>(x * inv_sqrt2));
  }
}

template <typename T, typename V>
V gelu_gradient(V x, V dy) {
  const T inv_sqrt2 = T(1 / std::numbers::sqrt2);
  const T inv_sqrt2pi = T(1 / std::sqrt(2 * std::numbers::pi));
  if constexpr (std::is_same_v<V, T>) {
    const T cdf = T(0.5) * (T(1) + erf_approx(x * inv_sqrt2));
    const T pdf = exp_approx(T(-0.5) * x * x) * inv_sqrt2pi;
    return dy * (cdf + x * pdf);
  } else {
    const V cdf = T(0.5) * (T(1) + erf_approx_lanes<T>(x * inv_sqrt2));
    const V pdf = exp_approx_lanes<T>(T(-0.5) * x * x) * inv_sqrt2pi;
    return dy * (cdf + x * pdf);
  }
}

// dx = dy where x > 0, else 0, over [begin, end). Pointers as arguments and dy loaded before
// the select: a branch-free loop that vectorizes (dx may be dy). A branch on the sign of x
// mispredicts about every other element of a ReLU MLP's input.
template <typename T>
void relu_backward(const T* x, const T* dy, T* dx, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const T g = dy[i];
    dx[i] = x[i] > T(0) ? g : T(0);
  }
}

}  // namespace

template <typename T>
void activation_forward(Activation a, const T* x, T* y, int64_t n) {
  parallel_for(shard_count(n, kChunk), [&](int64_t s) {
    const int64_t end = std::min(n, (s + 1) * kChunk);
    int64_t i = s * kChunk;
    if (a == Activation::relu) {
      for (; i < end; ++i) y[i] = x[i] > T(0) ? x[i] : T(0);
      return;
    }
    for (; i + kBlock <= end; i += kBlock) {
      const Block16<T> v = gelu<T>(load16(x + i));
      store16(y + i, v);
    }
    for (; i < end; ++i) y[i] = gelu<T>(x[i]);
  });
}

template <typename T>
void activation_backward(Activation a, const T* x, const T* dy, T* dx, int64_t n) {
  parallel_for(shard_count(n, kChunk), [&](int64_t s) {
    const int64_t end = std::min(n, (s + 1) * kChunk);
    int64_t i = s * kChunk;
    if (a == Activation::relu) {
      relu_backward(x, dy, dx, i, end);
      return;
    }
    for (; i + kBlock <= end; i += kBlock) {
      const Block16<T> v = gelu_gradient<T>(load16(x + i), load16(dy + i));
      store16(dx + i, v);
    }
    for (; i < end; ++i) dx[i] = gelu_gradient<T>(x[i], dy[i]);
  });
}

template void activation_forward<float>(Activation, const float*, float*, int64_t);
template void activation_forward<double>(Activation, const double*, double*, int64_t);
template void activation_backward<float>(Activation, const float*, const float*, float*, int64_t);
template void activation_backward<double>(Activation, const double*, const double*, double*,
                                          int64_t);

}  // namespace normlab
