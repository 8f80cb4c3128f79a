// Bounds on float32 rounding error, derived from the arithmetic (docs/twin.md, "The bound").
//
// A float32 result computed by normlab is compared with a float64 reference `ref` of the same
// function on the same float32 inputs, next to an independent float32 computation of it (the
// PyTorch twin, or normlab's other path): err_other = max|other − ref| is this computation's
// rounding error as another order of the same sums makes it, conditioning included. K roundings
// that accumulate into one result (a sum of K terms, or a chain of sums of K terms in all) give
// a worst-case error of K · u · Σ|terms| over all orders and a typical error of
// sqrt(K) · u · Σ|terms| (u the unit roundoff), so one order's error exceeds another's typical
// one by at most sqrt(K):
//     bound = sqrt(K) · (err_other + eps32 · max|ref|)
// eps32 · max|ref| is the least error a float32 result carries (its own rounding), for results
// whose other error happens to vanish. Every rounding error scales with the unit roundoff, so
// the same computations in double are bounded by bound · eps64 / eps32.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/hyper_conn.hpp"
#include "normlab/model/model_config.hpp"

namespace normlab::testing {

constexpr double kEps32 = 0x1p-23;  // float32 machine epsilon
constexpr double kEps64 = 0x1p-52;  // float64 machine epsilon

inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

inline double max_abs(const std::vector<double>& a) {
  double worst = 0;
  for (double v : a) worst = std::max(worst, std::abs(v));
  return worst;
}

// K of a forward pass over sequences of T tokens: at each of the S sublayers the longest sum is
// over T keys, D, the MLP's M or V, and mHC adds its Sinkhorn iterations' 2 · kSinkhornIters
// normalizations of n entries.
inline double forward_roundings(const ModelConfig& c, int64_t T) {
  const double M = c.mlp ? double(c.mlp_mult) * c.width : 0;
  // pos relative: a logit sums ⟨q, k⟩, ⟨u, k⟩ and ⟨q + v, r⟩ (3·dh terms), r itself a sum of D
  // (core/kernels/relative.hpp).
  const double relative =
      c.pos == PosEncoding::relative ? double(c.width) + 3.0 * c.head_dim() : 0.0;
  const double longest =
      std::max<double>({double(T), double(c.width), M, double(c.vocab), relative});
  const bool mhc = c.scheme == Scheme::hyper_connections && c.sinkhorn;
  const double sinkhorn = mhc ? 2.0 * kSinkhornIters * c.streams : 0;
  return c.layers * c.sublayers_per_layer() * (longest + sinkhorn);
}

// The float32 bound above; K counts the roundings into one result, ref_scale = max|ref|.
inline double rounding_bound(double K, double err_other, double ref_scale) {
  return std::sqrt(K) * (err_other + kEps32 * ref_scale);
}

}  // namespace normlab::testing
