// Helpers for finite-difference checks in double precision.
//
// relative_error(a, n) = ‖a − n‖ / (‖a‖ + ‖n‖), 0 when both are 0: the per-tensor measure every
// gradient check in the suite bounds by 1e-6.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "normlab/base/rng.hpp"

namespace normlab::testing {

constexpr double kGradTolerance = 1e-6;  // bound on relative_error per tensor
constexpr double kStep = 1e-5;           // central-difference step h

inline double relative_error(const std::vector<double>& a, const std::vector<double>& n) {
  double diff2 = 0, a2 = 0, n2 = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff2 += (a[i] - n[i]) * (a[i] - n[i]);
    a2 += a[i] * a[i];
    n2 += n[i] * n[i];
  }
  const double denom = std::sqrt(a2) + std::sqrt(n2);
  return denom > 0 ? std::sqrt(diff2) / denom : 0.0;
}

inline double norm2(const std::vector<double>& a) {
  double s = 0;
  for (double v : a) s += v * v;
  return std::sqrt(s);
}

// The indices of all n elements of a tensor.
inline std::vector<int64_t> all_elements(int64_t n) {
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = i;
  return out;
}

// The indices of `rows` runs of `width` elements, run r starting at offset + r·stride: a
// padded (rows, width) block with row stride `stride`, or one part of each row of a packed one.
inline std::vector<int64_t> strided_rows(int64_t rows, int64_t width, int64_t stride,
                                         int64_t offset = 0) {
  std::vector<int64_t> out;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < width; ++j) out.push_back(offset + r * stride + j);
  }
  return out;
}

// Central differences dL/dx_i = (L(x + h e_i) − L(x − h e_i)) / 2h for each i of `indices`, in
// their order. x is restored.
inline std::vector<double> numeric_gradient(std::vector<double>& x,
                                            const std::function<double()>& loss,
                                            const std::vector<int64_t>& indices, double h = kStep) {
  std::vector<double> g(indices.size());
  for (size_t j = 0; j < indices.size(); ++j) {
    double& v = x[indices[j]];
    const double saved = v;
    v = saved + h;
    const double up = loss();
    v = saved - h;
    const double down = loss();
    v = saved;
    g[j] = (up - down) / (2 * h);
  }
  return g;
}

// n values drawn from N(mean, std²).
inline std::vector<double> random_normal(Rng& rng, int64_t n, double std = 1.0, double mean = 0.0) {
  std::vector<double> v(n);
  for (double& x : v) x = mean + std * rng.normal();
  return v;
}

// L = Σ w ⊙ y.
inline double weighted_sum(const std::vector<double>& w, const std::vector<double>& y) {
  double s = 0;
  for (size_t i = 0; i < w.size(); ++i) s += w[i] * y[i];
  return s;
}

}  // namespace normlab::testing
