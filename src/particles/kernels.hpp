// Small loops of the particle right-hand side, written so that GCC vectorizes them without
// -ffast-math (which the project forbids): explicit partial sums instead of reassociation, and an
// exp built from operations that have vector forms. Internal to src/particles.
#pragma once

#include <bit>
#include <cstdint>

namespace normlab::particles::kernels {

// Number of independent partial sums in reductions (one AVX-512 register of doubles).
inline constexpr int kLanes = 8;

// Σ a[i] b[i], with kLanes interleaved partial sums added in a fixed order (deterministic).
inline double dot(const double* a, const double* b, int m) {
  double part[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= m; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) part[l] += a[i + l] * b[i + l];
  }
  for (int l = 0; i < m; ++i, ++l) part[l] += a[i] * b[i];
  double s = 0;
  for (int l = 0; l < kLanes; ++l) s += part[l];
  return s;
}

// exp(x) for x ≤ 0, to about 2 ulp; x < −708 gives 2^−1022·e^(x+708·ln 2 rounded), i.e.
// a value ≤ 1e-307 (harmless in a softmax, where the largest term is 1).
// Range reduction x = k ln 2 + r with |r| ≤ ln2/2 (k by the 1.5·2^52 rounding trick), then the
// degree-13 Taylor polynomial of e^r (truncation error < 5e-18), then scaling by 2^k through
// the exponent bits.
inline double exp_nonpositive(double x) {
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 0.6931471805598903;     // ln 2, high bits (exact times small k)
  constexpr double kLn2Lo = 5.497923018708371e-14;  // ln 2 − kLn2Hi
  constexpr double kShift = 6755399441055744.0;     // 1.5 · 2^52
  x = x < -708.0 ? -708.0 : x;
  const double shifted = x * kLog2e + kShift;
  const double k = shifted - kShift;
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // The low bits of `shifted` hold k in two's complement; (k + 1023) << 52 is 2^k.
  const uint64_t bits = (std::bit_cast<uint64_t>(shifted) + 1023u) << 52;
  return p * std::bit_cast<double>(bits);
}

}  // namespace normlab::particles::kernels
