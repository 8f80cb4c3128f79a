// The particle form of a transformer's attention layers (docs/particles.md, "Bridge to trained
// models"). Letters: D width, H heads, h_d = D/H head width, L layers, c the scale of the norm's
// output (√D for rmsnorm, 1 for l2), g the norm_in gain (D), G = diag(c·g).
//
// Layer l's attention on inputs u_j = c g ⊙ θ_j (the norm of a pre/peri stream x_j = r_j θ_j) is
//   y_j = W_o concat_h( Σ_k softmax_k(s ⟨W_q,h u_j, W_k,h u_k⟩) W_v,h u_k ),  s = beta/√h_d,
// with W_q,h, W_k,h, W_v,h the head's h_d rows of W_q, W_k, W_v (h_d, D) and W_o,h the head's
// h_d columns of W_o (D, h_d). In the simulator's form A_j = (1/H) Σ_h Σ_k w^h_jk V_h θ_k with
// w^h_jk = softmax_k(β ⟨Q_h θ_j, K_h θ_k⟩) this is exactly y_j with
//   Q_h = [0; W_q,h G; 0]  (d, d: the head's rows, zero elsewhere),  K_h likewise,
//   V_h = H · W_o,h W_v,h G  (d, d),   β = s,
// so Q_hᵀ K_h = G W_q,hᵀ W_k,h G. For post (no norm before attention) the input is the stream
// itself, u_j = ρ_l θ_j with ρ_l = ‖x‖: the mean embedding norm for layer 0 (passed in) and c
// after (exact when the previous post-norm gains are 1), so G = ρ_l I.
//
// Schemes with a particle law: pre → pre, post → post, peri and peri_init → peri,
// mix(k) → mix(τ = k). Norms: rmsnorm and l2 (layernorm and standardize centre the input, which
// is not a function of the direction alone). No RoPE (it rotates q and k by position). Anything
// else is a UsageError with one line saying what is allowed.
#pragma once

#include <string>
#include <vector>

#include "normlab/model/model.hpp"
#include "normlab/particles/config.hpp"
#include "normlab/particles/weights.hpp"

namespace normlab::particles {

struct ModelParticles {
  ParticlesConfig config;          // scheme, d, heads, beta, causal, tau, t_end = L, qkv per layer
  std::vector<Weights> layers;     // L entries, H heads each
  double input_scale = 1;          // c: √D for rmsnorm, 1 for l2
  std::vector<std::string> notes;  // what the ODE leaves out (MLP, gains), one line each
};

// Throws UsageError (one line: what is allowed) for a model without a particle law.
// `embedding_norm` is the mean ‖x_j‖ of the stream entering layer 0 (post's layer-0 scale).
ModelParticles extract_model_particles(const Model<float>& model, double embedding_norm);

// Throws the UsageError of extract_model_particles, without extracting.
void check_model_has_particle_law(const ModelConfig& config);

}  // namespace normlab::particles
