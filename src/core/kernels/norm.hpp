// Normalization kernels, forward and backward. Rows of length D, N rows.
//
//   layernorm:   y = (x − μ) · r · g + b,  r = 1 / sqrt(mean((x − μ)²) + eps)
//   rmsnorm:     y = x · r · g,            r = 1 / sqrt(mean(x²) + eps)
//   standardize: y = (x − μ) · r           (layernorm without parameters)
//   l2:          y = x · r,                r = 1 / sqrt(sum(x²) + eps)   (unit sphere)
//
// Backward, with x̂ = (x − μ)·r and g = dy ⊙ gain (or dy without a gain):
//   centered (layernorm, standardize): dx = r · (g − mean(g) − x̂ · mean(g ⊙ x̂))
//   uncentered, divisor D (rmsnorm):   dx = r · (g − x̂ · mean(g ⊙ x̂))
//   uncentered, divisor 1 (l2):        dx = r · (g − x̂ · sum(g ⊙ x̂))
//   dgain = Σ_rows dy ⊙ x̂,  dbias = Σ_rows dy
#pragma once

#include <cstdint>

#include "normlab/model_config.hpp"

namespace normlab {

// Does this kind carry a gain / a bias parameter (each of size D)?
bool norm_has_gain(NormKind kind);
bool norm_has_bias(NormKind kind);

// x, y: (N, D). mean, rstd: (N) saved for the backward pass. gain/bias may be null when the
// kind has none. y may not alias x.
template <typename T>
void norm_forward(NormKind kind, const T* x, const T* gain, const T* bias, T* y, T* mean, T* rstd,
                  int64_t N, int D, double eps);

// dx (N, D) += the gradient through the norm; dgain, dbias (D) += parameter gradients.
template <typename T>
void norm_backward(NormKind kind, const T* x, const T* gain, const T* mean, const T* rstd,
                   const T* dy, T* dx, T* dgain, T* dbias, int64_t N, int D);

}  // namespace normlab
