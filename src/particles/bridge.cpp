#include "normlab/particles/bridge.hpp"

#include <fmt/format.h>

#include <cmath>

#include "normlab/base/errors.hpp"
#include "normlab/particles/layer_weights.hpp"
#include "normlab/particles/simulation.hpp"
#include "normlab/probes/depth_probe.hpp"

namespace normlab::particles {

BridgeResult run_bridge(Model<float>& model, const Batch& batch, const BridgeOptions& options) {
  const ModelConfig& mc = model.config();
  check_model_has_particle_law(mc);
  const int64_t B = batch.batch, T = batch.len;
  const int D = mc.width, L = mc.layers;
  if (T < 2) {
    throw UsageError(fmt::format("the bridge needs sequences of at least 2 tokens, got {}", T));
  }

  // The stream entering layer 0, (B, T, D).
  model.forward(batch.tokens.data(), B, T, batch.fields);
  const float* x0 = model.stream(0);
  std::vector<double> norms(static_cast<size_t>(B * T));
  double norm_sum = 0;
  for (int64_t row = 0; row < B * T; ++row) {
    double ss = 0;
    for (int a = 0; a < D; ++a) ss += static_cast<double>(x0[row * D + a]) * x0[row * D + a];
    norms[static_cast<size_t>(row)] = std::sqrt(ss);
    norm_sum += norms[static_cast<size_t>(row)];
  }
  std::vector<float> stream0(x0, x0 + B * T * D);

  BridgeResult result;
  result.batch = B;
  result.seq_len = T;
  result.embedding_norm = norm_sum / static_cast<double>(B * T);
  ModelParticles mp = extract_model_particles(model, result.embedding_norm);
  result.notes = mp.notes;

  // Measured: the depth probe on the same batch.
  const DepthResult depth = run_depth_probe(model, batch);
  const int spl = mc.sublayers_per_layer();

  ParticlesConfig c = mp.config;
  c.n = static_cast<int>(T);
  c.init = InitKind::file;
  c.init_file = "(model embeddings)";
  c.qkv_file = "(model)";
  c.record_every = 1.0;
  c.integrator = options.integrator;
  c.dt = options.dt;
  c.rtol = options.rtol;
  c.atol = options.atol;
  c.r0 = c.scheme == SpeedLaw::mix ? mp.input_scale : 1.0;
  result.config = c;

  std::vector<double> predicted(static_cast<size_t>(L + 1), 0.0);
  std::vector<double> theta(static_cast<size_t>(T * D)), radii;
  for (int64_t b = 0; b < B; ++b) {
    radii.clear();
    for (int64_t j = 0; j < T; ++j) {
      const int64_t row = b * T + j;
      const double norm = norms[static_cast<size_t>(row)];
      if (!(norm > 0)) {
        throw InputError(fmt::format("sequence {}, token {}: zero embedding, no direction", b, j));
      }
      for (int a = 0; a < D; ++a) {
        theta[static_cast<size_t>(j * D + a)] = stream0[static_cast<size_t>(row * D + a)] / norm;
      }
      radii.push_back(c.scheme == SpeedLaw::pre    ? norm
                      : c.scheme == SpeedLaw::peri ? norm / mp.input_scale
                                                   : c.r0);
    }
    const Trajectory tr = simulate_from(c, LayerWeights::list(mp.layers), theta, radii);
    if (tr.rows.size() != static_cast<size_t>(L + 1)) {
      throw std::logic_error("bridge: expected one recorded row per layer");
    }
    for (int l = 0; l <= L; ++l) predicted[l] += tr.rows[static_cast<size_t>(l)].mean_cos;
  }
  for (int l = 0; l <= L; ++l) {
    const int p = l < L ? l * spl : static_cast<int>(depth.positions.size()) - 1;
    result.rows.push_back(
        {l, predicted[l] / static_cast<double>(B), depth.positions[static_cast<size_t>(p)].cosine});
  }
  return result;
}

std::string bridge_csv(const BridgeResult& r) {
  std::string out = "layer,predicted_cos,measured_cos\n";
  for (const BridgeRow& row : r.rows) {
    out += fmt::format("{},{:.10g},{:.10g}\n", row.layer, row.predicted_cos, row.measured_cos);
  }
  return out;
}

std::string format_bridge_table(const BridgeResult& r) {
  std::string out = fmt::format("{:>6}  {:>14}  {:>13}  {:>11}\n", "layer", "predicted cos",
                                "measured cos", "difference");
  for (const BridgeRow& row : r.rows) {
    out += fmt::format("{:>6}  {:>14.6f}  {:>13.6f}  {:>11.2e}\n", row.layer, row.predicted_cos,
                       row.measured_cos, row.predicted_cos - row.measured_cos);
  }
  return out;
}

}  // namespace normlab::particles
