// The normalization functions N and their properties, one row each (docs/schemes.md gives each
// definition). The kernels' dispatch (src/core/kernels/norm.cpp), the parameter layout
// (src/model/model_layout.cpp) and the names the parsers accept read these rows.
#pragma once

#include <stdexcept>

namespace normlab {

enum class NormKind {
  layernorm,    // (x - mean) / std * gain + bias
  rmsnorm,      // x / rms(x) * gain
  standardize,  // (x - mean) / std, no parameters
  l2,           // x / ||x||, no parameters (nGPT's unit sphere)
  none,         // identity (only with scheme pre: the unnormalized baseline)
  dyt,          // tanh(alpha * x) * gain + bias, alpha a scalar (Dynamic Tanh)
  derf,         // erf(alpha * x + shift) * gain + bias, alpha and shift scalars (Dynamic erf)
  scalenorm     // scale * x / ||x||, scale a scalar (ScaleNorm)
};

// The row statistic a kind divides by (norm.hpp gives the formulas).
enum class NormStatistic {
  variance,        // centered, r = 1 / sqrt(mean((x − μ)²) + eps): layernorm, standardize
  mean_square,     // r = 1 / sqrt(mean(x²) + eps): rmsnorm
  sum_of_squares,  // on the sphere, r = 1 / sqrt(sum(x²) + eps): l2, scalenorm
  pointwise,       // none: each value on its own (dyt, derf)
  identity,        // none: N(x) = x
};

// One scalar parameter, one tensor of shape (1): its name and its initial value, times
// sqrt(D) where `times_sqrt_width` (scalenorm's scale, as in the ScaleNorm paper's code, so
// that the output has unit RMS at init).
struct NormScalarInit {
  const char* name = "";
  double init = 0;
  bool times_sqrt_width = false;
};

struct NormKindRow {
  NormKind kind;
  const char* name;
  NormStatistic statistic;
  bool gain;         // a learned gain of shape (D)
  bool bias;         // a learned bias of shape (D)
  int scalar_count;  // scalars[0 .. scalar_count), in the kernels' order
  NormScalarInit scalars[2];
};

// In the order the parsers list the names. dyt's and derf's alpha start at 0.5, the papers'
// default; derf's shift at 0.
// clang-format off
inline constexpr NormKindRow kNormKinds[] = {
  // kind                   name           statistic                      gain   bias   scalars
  {NormKind::layernorm,   "layernorm",   NormStatistic::variance,       true,  true,  0, {}},
  {NormKind::rmsnorm,     "rmsnorm",     NormStatistic::mean_square,    true,  false, 0, {}},
  {NormKind::standardize, "standardize", NormStatistic::variance,       false, false, 0, {}},
  {NormKind::l2,          "l2",          NormStatistic::sum_of_squares, false, false, 0, {}},
  {NormKind::dyt,         "dyt",         NormStatistic::pointwise,      true,  true,  1,
   {{"alpha", 0.5, false}}},
  {NormKind::derf,        "derf",        NormStatistic::pointwise,      true,  true,  2,
   {{"alpha", 0.5, false}, {"shift", 0.0, false}}},
  {NormKind::scalenorm,   "scalenorm",   NormStatistic::sum_of_squares, false, false, 1,
   {{"scale", 1.0, true}}},
  {NormKind::none,        "none",        NormStatistic::identity,       false, false, 0, {}},
};
// clang-format on

constexpr const NormKindRow& norm_row(NormKind kind) {
  for (const NormKindRow& row : kNormKinds) {
    if (row.kind == kind) return row;
  }
  throw std::logic_error("norm kind without a row in kNormKinds");
}

}  // namespace normlab
