// The bridge to trained models (docs/particles.md, "Bridge to trained models"): the particle ODE
// with a model's own per-layer attention (model_weights.hpp), started from the model's own
// token embeddings, one unit of time per layer, against what the model does on the same inputs.
//
// For a batch (B, T): the stream entering layer 0 (after the embedding norm, if any) gives, per
// sequence b, T particles θ_j = x_j/‖x_j‖ with radii r_j = ‖x_j‖ (pre), ‖x_j‖/c (peri, whose
// model adds c·A/‖A‖ per layer), c (mix: the stream leaves a post norm with norm c) or 1
// (post: no radial law). Each sequence is integrated to t = L on its own (tokens attend within
// their sequence; causal when the model is). Per layer l = 0 .. L:
//   predicted_cos  mean over sequences of the ODE's mean pairwise cosine at t = l
//   measured_cos   the depth probe's `cosine` of the stream entering layer l (l = L: leaving
//                  the last layer, before any final norm) on the same batch (depth_probe.hpp)
#pragma once

#include <string>
#include <vector>

#include "normlab/base/batch.hpp"
#include "normlab/model/model.hpp"
#include "normlab/particles/config.hpp"
#include "normlab/particles/model_weights.hpp"

namespace normlab::particles {

struct BridgeOptions {
  IntegratorKind integrator = IntegratorKind::dopri5;
  double dt = 0.01;     // rk4 step, dopri5 first trial step
  double rtol = 1e-8;   // dopri5
  double atol = 1e-12;  // dopri5
};

struct BridgeRow {
  int layer = 0;
  double predicted_cos = 0;
  double measured_cos = 0;
};

struct BridgeResult {
  std::vector<BridgeRow> rows;  // L + 1
  ParticlesConfig config;       // of the ODE runs (n = T, one sequence's)
  std::vector<std::string> notes;
  int64_t batch = 0, seq_len = 0;
  double embedding_norm = 0;  // mean ‖x_j‖ entering layer 0
};

// Runs the model (one forward, the depth probe) and B ODE integrations. Throws UsageError for a
// model without a particle law and for T < 2.
BridgeResult run_bridge(Model<float>& model, const Batch& batch, const BridgeOptions& options);

// "layer,predicted_cos,measured_cos" and one row per layer.
std::string bridge_csv(const BridgeResult& result);
// A small table with the difference, for the terminal.
std::string format_bridge_table(const BridgeResult& result);

}  // namespace normlab::particles
