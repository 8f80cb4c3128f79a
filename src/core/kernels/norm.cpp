#include "core/kernels/norm.hpp"

#include "core/contracts.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/kernels/block16.hpp"
#include "core/kernels/common_width.hpp"
#include "core/kernels/pointwise_norm.hpp"
#include "core/parallel.hpp"
#include "core/scratch.hpp"
#include "normlab/base/norm_kind.hpp"

namespace normlab {
namespace {

bool centered(NormKind k) {
  return norm_row(k).statistic == NormStatistic::variance;
}

bool pointwise(NormKind k) {
  return norm_row(k).statistic == NormStatistic::pointwise;
}

// The sum of squares is divided by D (a mean), or by 1 for the kinds on the sphere.
bool on_sphere(NormKind k) {
  return norm_row(k).statistic == NormStatistic::sum_of_squares;
}

void check_scalars(NormKind kind, const void* scalars, const char* what) {
  if (norm_scalar_count(kind) > 0 && scalars == nullptr) {
    throw std::logic_error(std::string(what) + ": norm kind " + norm_row(kind).name +
                           " needs its scalar parameters");
  }
}

}  // namespace

bool norm_has_gain(NormKind k) {
  return norm_row(k).gain;
}
bool norm_has_bias(NormKind k) {
  return norm_row(k).bias;
}
int norm_scalar_count(NormKind k) {
  return norm_row(k).scalar_count;
}

// Rows are processed in blocks of 16 (block16.hpp), the last one partial: a row of width 15
// is one masked block. Lanes beyond the row's end load as 0 and are masked out of every sum
// (x − μ is not 0 there); the sums are 16 lane sums reduced pairwise (the order of dot.hpp).

template <typename T>
void norm_forward(const NormWeights<T>& weights, const T* x, T* y, RowStats<T> stats,
                  RowShape shape, double eps) {
  const NormKind kind = weights.kind;
  const T *gain = weights.gain, *bias = weights.bias, *scalars = weights.scalars;
  T *mean = stats.mean, *rstd = stats.rstd;
  const int64_t N = shape.rows;
  const int D_arg = shape.width;  // the loops below take it as a known width where they can
  const int D = D_arg;
  check_scalars(kind, scalars, "norm_forward");
  require_contract(N >= 0 && D >= 1, "norm_forward", "N >= 0 rows of D >= 1 values");
  require_contract(!ranges_overlap<T>(x, N * D, y, N * D), "norm_forward", "y may not alias x");
  if (pointwise(kind)) {
    std::fill(mean, mean + N, T(0));
    std::fill(rstd, rstd + N, T(1));
    pointwise_norm_forward(kind, x, gain, bias, scalars, y, N, D);
    return;
  }
  const bool center = centered(kind);
  const T divisor = on_sphere(kind) ? T(1) : T(D);
  const bool has_gain = norm_has_gain(kind);
  const bool has_bias = norm_has_bias(kind);
  const bool scaled = kind == NormKind::scalenorm;
  const T scale = scaled ? scalars[0] : T(1);
  const Block16<T> lanes = lane_indices<T>();
  for_row_shards(N, [&](int64_t s, int64_t n0, int64_t n1) {
    with_study_width(D_arg, [&](auto width) {
      const int D = width_or(width, D_arg);
      for (int64_t n = n0; n < n1; ++n) {
        const T* xr = x + n * D;
        T* yr = y + n * D;
        T mu = 0;
        if (center) {
          Block16<T> sum = {};
          for (int64_t b = 0; b < D; b += kBlock) sum += load_first(xr + b, D - b);
          mu = sum_of_lanes<T>(sum) / T(D);
        }
        Block16<T> ss = {};
        for (int64_t b = 0; b < D; b += kBlock) {
          const Block16<T> d = load_first(xr + b, D - b) - mu;
          ss += where_less(lanes, Block16<T>{} + T(D - b), d * d, Block16<T>{});
        }
        const T r = T(1) / std::sqrt(sum_of_lanes<T>(ss) / divisor + T(eps));
        mean[n] = mu;
        rstd[n] = r;
        for (int64_t b = 0; b < D; b += kBlock) {
          Block16<T> v = (load_first(xr + b, D - b) - mu) * r;
          if (has_gain) v *= load_first(gain + b, D - b);
          if (has_bias) v += load_first(bias + b, D - b);
          if (scaled) v *= scale;
          store_first(yr + b, D - b, v);
        }
      }
    });
  });
}

template <typename T>
void norm_apply(const NormWeights<T>& weights, const T* x, T* y, RowStats<const T> stats,
                RowShape shape) {
  const NormKind kind = weights.kind;
  require_contract(!pointwise(kind), "norm_apply", "a kind with row statistics");
  check_scalars(kind, weights.scalars, "norm_apply");
  const int64_t N = shape.rows;
  const int D = shape.width;
  const T scale = kind == NormKind::scalenorm ? weights.scalars[0] : T(1);
  for (int64_t n = 0; n < N; ++n) {
    for (int d = 0; d < D; ++d) {
      T v = (x[n * D + d] - stats.mean[n]) * stats.rstd[n];
      if (norm_has_gain(kind)) v *= weights.gain[d];
      if (norm_has_bias(kind)) v += weights.bias[d];
      y[n * D + d] = v * scale;
    }
  }
}

template <typename T>
void norm_backward(const NormWeights<T>& weights, const T* x, RowStats<const T> stats, const T* dy,
                   T* dx, const NormGrads<T>& grads, RowShape shape) {
  const NormKind kind = weights.kind;
  const T *gain = weights.gain, *scalars = weights.scalars;
  const T *mean = stats.mean, *rstd = stats.rstd;
  T *dgain = grads.gain, *dbias = grads.bias, *dscalars = grads.scalars;
  const int64_t N = shape.rows;
  const int D_arg = shape.width;  // the loops below take it as a known width where they can
  const int D = D_arg;
  check_scalars(kind, scalars, "norm_backward");
  check_scalars(kind, dscalars, "norm_backward (gradients)");
  if (pointwise(kind)) {
    pointwise_norm_backward(kind, x, gain, scalars, dy, dx, dgain, dbias, dscalars, N, D);
    return;
  }
  const bool center = centered(kind);
  const T divisor = on_sphere(kind) ? T(1) : T(D);
  const bool has_gain = norm_has_gain(kind);
  const bool has_bias = norm_has_bias(kind);
  const bool scaled = kind == NormKind::scalenorm;
  const T scale = scaled ? scalars[0] : T(1);
  const int64_t shards = shard_count(N);
  // scalenorm: per-shard partial sums of dy ⊙ x̂ over rows and features (dc), in double.
  double* scale_base =
      scaled ? zeroed_scratch<double>(ScratchUse::norm_scale_partial, shards) : nullptr;
  // Per-shard partial parameter gradients, summed in shard order afterwards: Σ dy ⊙ x̂ in
  // [0, D), Σ dy in [Dp, Dp + D), Dp = D rounded up to 16 so both are read in whole blocks.
  const int64_t Dp = pad16(D);
  const int64_t width = has_gain ? 2 * Dp : 0;
  T* partial_base =
      width > 0 ? zeroed_scratch<T>(ScratchUse::norm_partial, shards * width) : nullptr;
  for_row_shards(N, [&](int64_t s, int64_t n0, int64_t n1) {
    T* part = width > 0 ? partial_base + s * width : nullptr;
    with_study_width(D_arg, [&](auto known) {
      const int D = width_or(known, D_arg);
      for (int64_t n = n0; n < n1; ++n) {
        const T* xr = x + n * D;
        const T* dyr = dy + n * D;
        const T mu = mean[n];
        const T r = rstd[n];
        // Lanes beyond the row: dy loads as 0, so g and every product with it are 0 there.
        Block16<T> g_sum = {}, gx_sum = {}, dx_sum = {};
        for (int64_t b = 0; b < D; b += kBlock) {
          const Block16<T> xhat = (load_first(xr + b, D - b) - mu) * r;
          const Block16<T> d = load_first(dyr + b, D - b);
          const Block16<T> g = has_gain ? d * load_first(gain + b, D - b) : scaled ? d * scale : d;
          g_sum += g;
          gx_sum += g * xhat;
          if (scaled) dx_sum += d * xhat;
          if (part != nullptr) {
            Block16<T> pg = load16(part + b) + d * xhat;
            Block16<T> pb = load16(part + Dp + b) + d;
            store16(part + b, pg);
            store16(part + Dp + b, pb);
          }
        }
        if (scaled) scale_base[s] += static_cast<double>(sum_of_lanes<T>(dx_sum));
        const T g_mean = sum_of_lanes<T>(g_sum) / T(D);
        const T gx_mean = sum_of_lanes<T>(gx_sum) / divisor;
        T* dxr = dx + n * D;
        for (int64_t b = 0; b < D; b += kBlock) {
          const Block16<T> xhat = (load_first(xr + b, D - b) - mu) * r;
          const Block16<T> d = load_first(dyr + b, D - b);
          const Block16<T> g = has_gain ? d * load_first(gain + b, D - b) : scaled ? d * scale : d;
          Block16<T> v = g - xhat * gx_mean;
          if (center) v -= g_mean;
          store_first(dxr + b, D - b, load_first(dxr + b, D - b) + r * v);
        }
      }
    });
  });
  if (width > 0) {
    for (int64_t s = 0; s < shards; ++s) {
      const T* part = partial_base + s * width;
      for (int i = 0; i < D; ++i) dgain[i] += part[i];
      if (has_bias) {
        for (int i = 0; i < D; ++i) dbias[i] += part[Dp + i];
      }
    }
  }
  if (scaled) {
    double dscale = 0;
    for (int64_t s = 0; s < shards; ++s) dscale += scale_base[s];
    dscalars[0] += static_cast<T>(dscale);
  }
}

template void norm_forward<float>(const NormWeights<float>&, const float*, float*, RowStats<float>,
                                  RowShape, double);
template void norm_forward<double>(const NormWeights<double>&, const double*, double*,
                                   RowStats<double>, RowShape, double);
template void norm_apply<float>(const NormWeights<float>&, const float*, float*,
                                RowStats<const float>, RowShape);
template void norm_apply<double>(const NormWeights<double>&, const double*, double*,
                                 RowStats<const double>, RowShape);
template void norm_backward<float>(const NormWeights<float>&, const float*, RowStats<const float>,
                                   const float*, float*, const NormGrads<float>&, RowShape);
template void norm_backward<double>(const NormWeights<double>&, const double*,
                                    RowStats<const double>, const double*, double*,
                                    const NormGrads<double>&, RowShape);

}  // namespace normlab
