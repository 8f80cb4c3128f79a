// Whether every value of a float buffer is finite, checked after each training step over all
// weights (a million of them in the dictionary study, where the early-exit std::isfinite loop
// it replaces took 2% of the run).
#pragma once

#include <bit>
#include <cstdint>

namespace normlab {

// values (n): true iff none is ±Inf or NaN. A float is Inf or NaN iff its exponent bits are all
// ones; the flags are OR-ed over the whole buffer without an early exit, so the loop vectorizes.
inline bool all_finite(const float* values, int64_t n) {
  constexpr uint32_t kExponent = 0x7f800000u;
  uint32_t non_finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    non_finite |= (std::bit_cast<uint32_t>(values[i]) & kExponent) == kExponent;
  }
  return non_finite == 0;
}

}  // namespace normlab
