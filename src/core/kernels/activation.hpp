// Elementwise MLP nonlinearities, forward and backward.
//   gelu(x) = x Φ(x) = 0.5 x (1 + erf(x / √2))        (exact form, PyTorch's default; in
//                                                     float, erf and exp are the vectorizable
//                                                     approximations of fast_math.hpp, |Δerf| ≤
//                                                     5e-7)
//   gelu'(x) = Φ(x) + x φ(x),  φ(x) = exp(−x²/2) / √(2π)
//   relu(x) = max(x, 0),       relu'(x) = [x > 0]
#pragma once

#include <cstdint>

#include "normlab/base/activation.hpp"

namespace normlab {

// y = act(x), n elements.
template <typename T>
void activation_forward(Activation a, const T* x, T* y, int64_t n);

// dx = act'(x) ⊙ dy (overwrites dx).
template <typename T>
void activation_backward(Activation a, const T* x, const T* dy, T* dx, int64_t n);

}  // namespace normlab
