// ALiBi, attention with linear biases (Press, Smith & Lewis 2022, arXiv 2108.12409): no
// position enters the embeddings; head h adds a fixed bias to its scaled logits,
//   S_ij = scale · ⟨q_i, k_j⟩ + m_h · bias(i, j)
// with query i, key j (0-based) and
//   causal:        bias(i, j) = −(i − j)                    (j ≤ i; Press et al.)
//   bidirectional: bias(i, j) = −|i − j| + 0.5 · [j < i]    (Delétang et al. 2023's encoder,
//                  models/positional_encodings.py: keys in the past are penalized 0.5 less,
//                  "to (arbitrarily) break the symmetry")
// Slopes, as the official implementation's get_slopes: for H a power of two,
//   m_h = 2^(−8(h+1)/H),  h = 0 .. H−1  (8 heads: 1/2, 1/4, …, 1/256);
// otherwise, with P the largest power of two below H, the P slopes of P heads, then the slopes
// 2^(−8(2k+1)/(2P)), k = 0 .. H−P−1 (every other slope of 2P heads).
// The bias is a constant: it changes no gradient formula (attention.hpp's backward reads the
// probabilities).
#pragma once

#include <cmath>
#include <cstdint>

namespace normlab {

inline double alibi_slope(int h, int heads) {
  int P = 1;
  while (2 * P <= heads) P *= 2;
  if (h < P) return std::exp2(-8.0 * (h + 1) / P);
  const int k = h - P;
  return std::exp2(-8.0 * (2 * k + 1) / (2.0 * P));
}

inline double alibi_bias(int64_t i, int64_t j, bool causal) {
  const double distance = static_cast<double>(i > j ? i - j : j - i);
  if (causal) return -distance;
  return -distance + (j < i ? 0.5 : 0.0);
}

}  // namespace normlab
