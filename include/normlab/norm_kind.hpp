// The normalization function N (docs/schemes.md gives each definition).
#pragma once

namespace normlab {

// The normalization function N (docs/schemes.md gives each one's exact formula).
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

}  // namespace normlab
