// The pointwise norm kinds, dyt and derf: each element on its own, no row statistics.
//
//   dyt:  y = tanh(α·x) ⊙ g + b       (Dynamic Tanh, "Transformers without Normalization")
//   derf: y = erf(α·x + s) ⊙ g + b    (Dynamic erf, arXiv 2512.10938)
//
// Called through norm_forward / norm_backward (norm.hpp, which gives the derivatives); the
// functions are the exact libm ones (std::tanh, std::erf, std::exp) in float and double.
#pragma once

#include <cstdint>

#include "normlab/base/norm_kind.hpp"

namespace normlab {

// kind: dyt or derf. x, y: (N, D); gain, bias: (D); scalars: α (dyt), α, s (derf).
template <typename T>
void pointwise_norm_forward(NormKind kind, const T* x, const T* gain, const T* bias,
                            const T* scalars, T* y, int64_t N, int D);

// dx (N, D) += the gradient through the function; dgain, dbias (D) and dscalars (1 for dyt,
// 2 for derf) += parameter gradients, summed over rows in a fixed order (independent of the
// thread count).
template <typename T>
void pointwise_norm_backward(NormKind kind, const T* x, const T* gain, const T* scalars,
                             const T* dy, T* dx, T* dgain, T* dbias, T* dscalars, int64_t N, int D);

}  // namespace normlab
