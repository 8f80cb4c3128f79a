// Dot products that vectorize without -ffast-math: 16 independent lane sums (no sum is
// reassociated), a scalar tail, then a fixed pairwise reduction of the lanes. The result is
// the same on every call for the same inputs, whatever the thread count.
#pragma once

namespace normlab {

template <typename T>
inline T dot_lanes(const T* a, const T* b, int n) {
  T lane[16] = {};
  int c = 0;
  for (; c + 16 <= n; c += 16) {
    for (int l = 0; l < 16; ++l) lane[l] += a[c + l] * b[c + l];
  }
  for (int l = 0; c < n; ++c, ++l) lane[l] += a[c] * b[c];
  for (int w = 8; w >= 1; w /= 2) {
    for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
  }
  return lane[0];
}

}  // namespace normlab
