// Relative positional encodings of Transformer-XL (Dai et al. 2019, arXiv 1901.02860, §3.3), as
// Delétang et al. 2023's encoder computes them (models/positional_encodings.py,
// compute_attention_with_relative_encodings). Head h's raw score of query i and key j is
//   A_ij = ⟨q_i + u_h, k_j⟩ + ⟨q_i + v_h, r_{i−j}⟩,   S_ij = scale · A_ij
// with u, v (D) learned biases (head h: columns [h·dh, (h+1)·dh)) and the relative keys
//   r_δ = W_R p_δ   (D),  W_R (D, D) learned,  δ = i − j in [−(T−1), T−1],
// p_δ the sinusoid of the distance: p_δ = [sin(δ ω_0), …, sin(δ ω_{D/2−1}),
// cos(δ ω_0), …, cos(δ ω_{D/2−1})], ω_k = 10000^(−2k/D) (the reference's layout: sines, then
// cosines).
// The reference shifts a (T, 2T) product so that entry (i, j) reads distance i − j; here the
// relative keys are indexed by δ directly, row δ + T − 1 of a (2T − 1, D) table.
//
// Backward, with dA_ij = ∂L/∂A_ij (attention.hpp's dS, the scale included):
//   dq_i += Σ_j dA_ij (k_j + r_{i−j}),   dk_j += Σ_i dA_ij (q_i + u_h)
//   du_h = Σ_ij dA_ij k_j,   dv_h = Σ_ij dA_ij r_{i−j},   dr_δ = Σ_{i−j=δ} dA_ij (q_i + v_h)
// (the content term ⟨q_i, k_j⟩'s share of dq and dk is attention.hpp's; this file adds the rest).
#pragma once

#include <cmath>
#include <cstdint>

namespace normlab {

// The relative terms of one attention sublayer, for sequences of length T.
template <typename T>
struct RelativeLogits {
  const T* u = nullptr;     // (D) content bias
  const T* v = nullptr;     // (D) position bias
  const T* keys = nullptr;  // (2T − 1, D) r_δ at row δ + T − 1
};

// Their gradients per sequence b (the kernel runs sequences in parallel; the caller sums over
// b). Overwritten.
template <typename T>
struct RelativeGrads {
  T* u = nullptr;     // (B, D)
  T* v = nullptr;     // (B, D)
  T* keys = nullptr;  // (B, 2T − 1, D)
};

// Rows of the relative table for length T: 2T − 1.
inline int64_t relative_rows(int64_t len) {
  return 2 * len - 1;
}

// p_δ for δ = −(T−1) .. T−1 at row δ + T − 1: out is (2T − 1, D), D even.
template <typename T>
void fill_relative_sinusoid(int64_t len, int D, T* out) {
  const int half = D / 2;
  for (int64_t r = 0; r < relative_rows(len); ++r) {
    const double delta = static_cast<double>(r - (len - 1));
    for (int k = 0; k < half; ++k) {
      const double omega = std::pow(10000.0, -2.0 * k / D);
      out[r * D + k] = T(std::sin(delta * omega));
      out[r * D + half + k] = T(std::cos(delta * omega));
    }
  }
}

// The relative part of A_ij for head h (columns [c0, c0 + dh), c0 = h·dh), q and k the head's
// q_i and k_j:  ⟨u_h, k_j⟩ + ⟨q_i + v_h, r_{i−j}⟩. For the scalar paths (the streaming attention,
// the hooks, the probes); the attention kernel computes the same sums.
template <typename Acc, typename T>
Acc relative_term(const RelativeLogits<T>& rel, int64_t len, int D, int c0, int dh, const T* q,
                  const T* k, int64_t i, int64_t j) {
  const T* r = rel.keys + (i - j + len - 1) * D + c0;
  Acc sum = 0;
  for (int c = 0; c < dh; ++c) {
    sum += static_cast<Acc>(rel.u[c0 + c]) * k[c] +
           (static_cast<Acc>(q[c]) + rel.v[c0 + c]) * static_cast<Acc>(r[c]);
  }
  return sum;
}

}  // namespace normlab
