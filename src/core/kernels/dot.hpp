// Dot products that vectorize without -ffast-math: 16 independent lane sums (no sum is
// reassociated; element c goes to lane c mod 16), then the fixed pairwise reduction of the
// lanes (block16.hpp's sum_of_lanes). The result is the same on every call for the same inputs,
// whatever the thread count.
#pragma once

#include <cstdint>

#include "core/kernels/block16.hpp"

namespace normlab {

// The 16 lane sums of ⟨a, b⟩ over n, before their reduction (element c in lane c mod 16).
template <typename T>
inline Block16<T> dot_lane_sums(const T* __restrict a, const T* __restrict b, int64_t n) {
  Block16<T> lanes = {};
  int64_t c = 0;
  for (; c + kBlock <= n; c += kBlock) lanes += load16(a + c) * load16(b + c);
  if (c < n) lanes += load_first(a + c, n - c) * load_first(b + c, n - c);
  return lanes;
}

// ⟨a, b⟩ over n.
template <typename T>
inline T dot_lanes(const T* __restrict a, const T* __restrict b, int64_t n) {
  return sum_of_lanes<T>(dot_lane_sums(a, b, n));
}

}  // namespace normlab
