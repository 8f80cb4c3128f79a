// Elementwise exp and erf that the compiler can vectorize (libm's are scalar calls).
//
// exp_approx<float>: Cody–Waite range reduction x = n ln2 + r, |r| ≤ ln2/2, and the Cephes
//   expf polynomial for e^r (about 1 ulp on the reduced range); inputs are clamped to
//   [−87.3, 88.7], so very negative inputs give ~1e-38 instead of 0.
// exp_approx_lanes: exp_approx on the 16 lanes of a Block16 (block16.hpp), the same bits.
// erf_approx<float>: Abramowitz & Stegun 7.1.26, |error| ≤ 1.5e-7.
// erf_approx_lanes: erf_approx on the 16 lanes of a Block16, the same bits.
// The double versions are std::exp and std::erf, so finite-difference checks in double see
// the exact functions.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/kernels/block16.hpp"

namespace normlab {

template <typename T>
inline T exp_approx(T x) {
  return std::exp(x);
}

namespace detail {

// The body of exp_approx<float> on a float or on a Block16<float> (V): the same operations in
// the same order on every lane, so exp_approx_lanes gives exp_approx's bits lane by lane.
template <typename V>
[[gnu::always_inline]] inline V exp_approx_f32(V x) {
  if constexpr (is_halves16<V>) {
    return {exp_approx_f32(x.lo), exp_approx_f32(x.hi)};
  } else {
    const V lo = V{} - 87.3f, hi = V{} + 88.7f;
    x = where_less(x, lo, lo, x);  // std::max(x, −87.3)
    x = where_less(hi, x, hi, x);  // std::min(x, 88.7)
    // n = round(x / ln2) by the 1.5·2^23 trick (exact for |x / ln2| < 2^22; vectorizes,
    // unlike std::floor).
    const V n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    V r = x - n * 0.693359375f;
    r -= n * -2.12194440e-4f;
    const V z = r * r;
    V y = V{} + 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * z + r + 1.0f;
    if constexpr (std::is_same_v<V, float>) {
      const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;  // 2^n
      return y * std::bit_cast<float>(bits);
    } else {
      typedef int32_t Lanes32 __attribute__((vector_size(sizeof(V))));
      const Lanes32 bits = (__builtin_convertvector(n, Lanes32) + 127) << 23;
      return y * std::bit_cast<V>(bits);
    }
  }
}

}  // namespace detail

template <>
inline float exp_approx<float>(float x) {
  return detail::exp_approx_f32(x);
}

// exp_approx on each of 16 lanes, bit for bit (for float, one vector evaluation).
template <typename T>
inline Block16<T> exp_approx_lanes(Block16<T> x) {
  if constexpr (std::is_same_v<T, float>) {
    return detail::exp_approx_f32(x);
  } else {
    for (int l = 0; l < kBlock; ++l) x[l] = exp_approx(x[l]);
    return x;
  }
}

template <typename T>
inline T erf_approx(T x) {
  return std::erf(x);
}

namespace detail {

// The body of erf_approx<float> on a float or a Block16<float> (V), as exp_approx_f32: the same
// operations in the same order on every lane. |x| is written as a select so that both forms
// take the same path (for x = −0 it keeps −0, which gives the same t, a² and result). V{} is
// 0.0f for a float and a block of zeros for a Block16.
template <typename V>
[[gnu::always_inline]] inline V erf_approx_f32(V x) {
  if constexpr (is_halves16<V>) {
    return {erf_approx_f32(x.lo), erf_approx_f32(x.hi)};
  } else {
    const V zero{};
    const V a = where_less(x, zero, -x, x);
    const V t = 1.0f / (1.0f + 0.3275911f * a);
    V p = V{} + 1.061405429f;
    p = p * t - 1.453152027f;
    p = p * t + 1.421413741f;
    p = p * t - 0.284496736f;
    p = p * t + 0.254829592f;
    const V y = 1.0f - p * t * exp_approx_f32(-a * a);
    return where_less(x, zero, -y, y);
  }
}

}  // namespace detail

template <>
inline float erf_approx<float>(float x) {
  return detail::erf_approx_f32(x);
}

// erf_approx on each of 16 lanes, bit for bit (for float, one vector evaluation).
template <typename T>
inline Block16<T> erf_approx_lanes(Block16<T> x) {
  if constexpr (std::is_same_v<T, float>) {
    return detail::erf_approx_f32(x);
  } else {
    for (int l = 0; l < kBlock; ++l) x[l] = erf_approx(x[l]);
    return x;
  }
}

}  // namespace normlab
