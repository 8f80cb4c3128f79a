// Normalization kernels, forward and backward. Rows of length D, N rows.
//
//   layernorm:   y = (x − μ) · r · g + b,  r = 1 / sqrt(mean((x − μ)²) + eps)
//   rmsnorm:     y = x · r · g,            r = 1 / sqrt(mean(x²) + eps)
//   standardize: y = (x − μ) · r           (layernorm without parameters)
//   l2:          y = x · r,                r = 1 / sqrt(sum(x²) + eps)   (unit sphere)
//   scalenorm:   y = x · r · c,            r = 1 / sqrt(sum(x²) + eps)   (l2 times a scalar c)
//   dyt:         y = tanh(α·x) ⊙ g + b                                   (no eps)
//   derf:        y = erf(α·x + s) ⊙ g + b                                (no eps)
//
// g, b are (D) vectors; α, s, c are scalars (the kind's `scalars`, in the order of
// norm_scalar_count). dyt and derf are pointwise (no row statistics); their mean and rstd
// outputs are written as 0 and 1.
//
// Backward, with x̂ = (x − μ)·r and g = dy ⊙ gain (or dy without a gain, c · dy for scalenorm):
//   centered (layernorm, standardize): dx = r · (g − mean(g) − x̂ · mean(g ⊙ x̂))
//   uncentered, divisor D (rmsnorm):   dx = r · (g − x̂ · mean(g ⊙ x̂))
//   uncentered, divisor 1 (l2, scalenorm): dx = r · (g − x̂ · sum(g ⊙ x̂))
//   dgain = Σ_rows dy ⊙ x̂,  dbias = Σ_rows dy,  dc = Σ_rows,features dy ⊙ x̂
// Pointwise kinds, elementwise with u = α·x (dyt) or u = α·x + s (derf), f = tanh or erf,
// f'(u) = 1 − tanh²(u) (dyt) or 2/√π · exp(−u²) (derf), and e = dy ⊙ gain ⊙ f'(u):
//   dx = α · e,  dα = Σ_rows,features e ⊙ x,  ds = Σ_rows,features e (derf),
//   dgain = Σ_rows dy ⊙ f(u),  dbias = Σ_rows dy
#pragma once

#include <cstdint>

#include "normlab/base/norm_kind.hpp"

namespace normlab {

// Does this kind carry a gain / a bias parameter (each of size D)?
bool norm_has_gain(NormKind kind);
bool norm_has_bias(NormKind kind);
// How many scalar parameters the kind carries, in this order: dyt α; derf α, s; scalenorm c.
// 0 for the other kinds.
int norm_scalar_count(NormKind kind);

// A norm's parameters as the kernels read them: its kind, gain and bias (D) and scalars
// (norm_scalar_count), each null when the kind has none. The backward reads no bias.
template <typename T>
struct NormWeights {
  NormKind kind = NormKind::none;
  const T* gain = nullptr;
  const T* bias = nullptr;
  const T* scalars = nullptr;
};

// Where the backward adds the parameters' gradients: dgain, dbias (D), dscalars
// (norm_scalar_count); null where the kind has none.
template <typename T>
struct NormGrads {
  T* gain = nullptr;
  T* bias = nullptr;
  T* scalars = nullptr;
};

// The row statistics the forward saves for the backward: mean and rstd, (N) each.
template <typename T>
struct RowStats {
  T* mean = nullptr;
  T* rstd = nullptr;
};

// N rows of D values.
struct RowShape {
  int64_t rows = 0;
  int width = 0;
};

// x, y: (N, D); stats receive mean and rstd. y may not alias x.
template <typename T>
void norm_forward(const NormWeights<T>& weights, const T* x, T* y, RowStats<T> stats,
                  RowShape shape, double eps);

// y (N, D) = the norm of x with the given statistics instead of its own: (x − μ) · r · g + b
// (times c for scalenorm). A kind with row statistics only (not dyt, derf). What a forward hook
// that replaces a norm's scale 1/r continues from (activation_hooks.hpp).
template <typename T>
void norm_apply(const NormWeights<T>& weights, const T* x, T* y, RowStats<const T> stats,
                RowShape shape);

// dx (N, D) += the gradient through the norm given dy (N, D), with the forward's stats; grads
// += the parameters' gradients.
template <typename T>
void norm_backward(const NormWeights<T>& weights, const T* x, RowStats<const T> stats, const T* dy,
                   T* dx, const NormGrads<T>& grads, RowShape shape);

}  // namespace normlab
