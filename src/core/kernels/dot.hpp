// Reductions that vectorize without -ffast-math: 16 independent lanes (no sum is
// reassociated), a scalar tail, then a fixed pairwise reduction of the lanes, written out level
// by level so that it compiles to vector operations (a loop over the level width compiles to
// scalar adds through the stack). The result is the same on every call for the same inputs,
// whatever the thread count.
#pragma once

#include <algorithm>

namespace normlab {

// lane[0] + ... + lane[15] in the fixed pairwise order.
template <typename T>
inline T reduce_lanes_sum(T* lane) {
  for (int l = 0; l < 8; ++l) lane[l] += lane[l + 8];
  for (int l = 0; l < 4; ++l) lane[l] += lane[l + 4];
  for (int l = 0; l < 2; ++l) lane[l] += lane[l + 2];
  return lane[0] + lane[1];
}

// ⟨a, b⟩ over n.
template <typename T>
inline T dot_lanes(const T* __restrict a, const T* __restrict b, int n) {
  T lane[16] = {};
  int c = 0;
  for (; c + 16 <= n; c += 16) {
    for (int l = 0; l < 16; ++l) lane[l] += a[c + l] * b[c + l];
  }
  for (int l = 0; c < n; ++c, ++l) lane[l] += a[c] * b[c];
  return reduce_lanes_sum(lane);
}

// Σ a over n.
template <typename T>
inline T sum_lanes(const T* __restrict a, int n) {
  T lane[16] = {};
  int c = 0;
  for (; c + 16 <= n; c += 16) {
    for (int l = 0; l < 16; ++l) lane[l] += a[c + l];
  }
  for (int l = 0; c < n; ++c, ++l) lane[l] += a[c];
  return reduce_lanes_sum(lane);
}

// max a over n ≥ 1 (exact in any order).
template <typename T>
inline T max_lanes(const T* __restrict a, int n) {
  T lane[16];
  for (int l = 0; l < 16; ++l) lane[l] = a[0];
  int c = 0;
  for (; c + 16 <= n; c += 16) {
    for (int l = 0; l < 16; ++l) lane[l] = std::max(lane[l], a[c + l]);
  }
  for (int l = 0; c < n; ++c, ++l) lane[l] = std::max(lane[l], a[c]);
  for (int l = 0; l < 8; ++l) lane[l] = std::max(lane[l], lane[l + 8]);
  for (int l = 0; l < 4; ++l) lane[l] = std::max(lane[l], lane[l + 4]);
  for (int l = 0; l < 2; ++l) lane[l] = std::max(lane[l], lane[l + 2]);
  return std::max(lane[0], lane[1]);
}

}  // namespace normlab
