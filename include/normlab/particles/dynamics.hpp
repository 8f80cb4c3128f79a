// The right-hand side of the normalized-attention dynamics (docs/particles.md) for n particles.
//
// Letters: n tokens, d dimension, H heads.
// State y (size n·d + n): directions Θ (n, d) row-major (row j = θ_j, unit norm), then radii
// r (n).
//
//   G_h = β Θ M_h Θᵀ                      (n, n), M_h = Q_hᵀ K_h precomputed once (d, d)
//   W_h = row-softmax(G_h)                (n, n)
//   A   = (1/H) Σ_h W_h Θ V_hᵀ            (n, d): row j = A_j, the mean of the heads' mixtures
//   dθ_j/dt = (A_j − ⟨θ_j, A_j⟩ θ_j) / s_j(t),   dr_j/dt from the speed law (speed_law.hpp;
//   mix(τ) has a breakpoint at τ).
//
// Several heads: A_j is the mean (not the sum) over heads, so H identical heads give exactly the
// one-head dynamics and ‖A_j‖ stays O(1) whatever H (this matters for the radial laws of pre and
// peri). With Q = K = V = I the matrix products with M and V are skipped (G = β Θ Θᵀ by a
// symmetric rank-k update, A = W Θ). All products are OpenBLAS dgemm/dsyrk/dtrmm in double
// precision.
//
// Schur coordinates (one head, Q, K, V not the identity): the system is integrated in the
// orthonormal basis O of the real Schur form V = O T Oᵀ (LAPACK dgees), T quasi-upper-triangular.
// The state holds θ̃_j = Oᵀ θ_j; M becomes Oᵀ M O and V becomes T, so Θ̃ Tᵀ is a triangular
// product (dtrmm, half the work of a dense one) plus the ≤ d/2 entries below T's diagonal.
// The dynamics is equivariant under rotations (softmax of inner products, projections, norms),
// and RK4, dopri5 and the renormalization commute with a fixed orthogonal change of variables, so
// every observable (cosines, norms, radii, speeds) is the same as in the original coordinates,
// to rounding. initial_state() rotates in, to_original() rotates back.
//
// Per-layer weights (layer_weights.hpp): the breakpoints include every integer in (0, t_end), so
// no step crosses one, and a step that starts in [k, k+1) uses layer k's Q_k, K_k, V_k (loaded,
// with M_h = Q_hᵀ K_h, when the layer changes). Schur coordinates are not used then (each layer
// has its own V); plain coordinates. A run with t_end ≤ 1 has no such breakpoint and uses layer 0
// only, i.e. the tied dynamics: Schur coordinates as for tied weights.
//
// Causal mask (config.causal): row j of W_h is the softmax over k ≤ j only.
//
// Span coordinates (Q = K = V = I and d > n): every A_j is a combination of the θ's, so the
// tokens never leave the span of the initial directions (dimension r ≤ n). initial_state() builds
// an orthonormal basis B (r, d) of that span (Gram–Schmidt, twice) and the state holds Θ B ᵀ
// (n, r): an isometry, so the dynamics and every observable are those of the original
// coordinates, and each product costs r/d of the full one (half at n = 256, d = 512).
#pragma once

#include <algorithm>
#include <vector>

#include "normlab/particles/config.hpp"
#include "normlab/particles/integrators.hpp"
#include "normlab/particles/layer_weights.hpp"
#include "normlab/particles/weights.hpp"

namespace normlab::particles {

class ParticleSystem final : public OdeSystem {
 public:
  // `fast_coordinates = false` forces the plain coordinates (for tests comparing the two).
  ParticleSystem(const ParticlesConfig& config, Weights weights, bool fast_coordinates = true);
  // Q, K, V per layer (or tied, as the LayerWeights says).
  ParticleSystem(const ParticlesConfig& config, LayerWeights layers, bool fast_coordinates = true);

  size_t size() const override { return static_cast<size_t>(n_) * dim_ + n_; }
  std::vector<double> breakpoints() const override;
  void rhs(double t, int segment, const double* y, double* dy) override;
  // Renormalizes every direction θ_j to unit length.
  void project(double* y) const override;

  // The state for directions `theta` (n, d) and radii all equal to config.r0, in the system's
  // coordinates. Fixes the span coordinates (if used): call it before integrating.
  std::vector<double> initial_state(const std::vector<double>& theta);
  // A state (or a derivative) in the original coordinates: [Θ (n, d), r (n)].
  std::vector<double> to_original(const std::vector<double>& y) const;
  bool uses_schur() const { return schur_; }
  bool uses_span() const { return span_; }

  int n() const { return n_; }
  int d() const { return d_; }
  // Columns of the state's direction block: d, or the span's dimension r.
  int dim() const { return dim_; }
  // The layer whose weights are loaded (per-layer weights; 0 when tied).
  int loaded_layer() const { return loaded_layer_; }
  // Start time of a segment: 0 for segment 0, else its breakpoint (segments past the last
  // breakpoint count as the last).
  double segment_start(int segment) const {
    if (segment <= 0 || breaks_.empty()) return 0.0;
    return breaks_[std::min(static_cast<size_t>(segment), breaks_.size()) - 1];
  }

 private:
  // Makes layer k's weights current (per-layer weights), forming M_h = Q_hᵀ K_h.
  void load_layer(int k);

  ParticlesConfig config_;
  LayerWeights layers_;
  Weights weights_;  // the current layer's (all of them when tied)
  int loaded_layer_ = 0;
  std::vector<double> breaks_;  // breakpoints(): τ (mix) and, per layer, 1, 2, …
  // RoPE: rotates row j of x (n, d) by token j's angles (config rope_base > 0).
  void rotate_by_position(double* x) const;

  int n_, d_;
  int dim_;                              // working dimension (d, or r in span coordinates)
  bool fast_;                            // coordinate changes allowed
  bool span_ = false;                    // integrating in span coordinates
  std::vector<double> basis_;            // B (r, d), orthonormal rows spanning Θ(0)
  std::vector<std::vector<double>> qk_;  // per head M_h = Q_hᵀ K_h (d, d)
  bool schur_ = false;                   // integrating in Schur coordinates of V
  std::vector<double> rotation_;         // O (d, d): θ = O θ̃
  std::vector<double> t_upper_;          // T with its subdiagonal zeroed (d, d)
  std::vector<double> t_sub_;            // T[i+1][i] (d - 1)
  std::vector<int> t_sub_index_;         // the i with T[i+1][i] ≠ 0
  // Workspaces, sized once.
  std::vector<double> z_;  // (n, d) Θ M_h; with RoPE the rotated queries Θ Q_hᵀ
  std::vector<double> k_;  // (n, d) with RoPE: the rotated keys Θ K_hᵀ
  // With RoPE: cos and sin of token j's angle for pair p, (n, rope_head_dim / 2).
  std::vector<double> rope_cos_, rope_sin_;
  std::vector<double> g_;  // (n, n) logits, then softmax weights
  std::vector<double> u_;  // (n, d) Θ V_hᵀ
  std::vector<double> a_;  // (n, d) A
};

}  // namespace normlab::particles
