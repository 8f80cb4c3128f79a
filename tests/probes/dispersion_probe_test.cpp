// The dispersion probe on hand-built one-layer models: a query that matches only the first
// position's key gives one-hot attention (max weight 1, entropy 0) at every length; zero
// queries give uniform attention (max weight 1/N, entropy ln N; causal rows ln(t + 1)).
#include "normlab/probes/dispersion_probe.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace normlab {
namespace {

// One layer, attention only, no norm, learned positions. Token v embeds as e_1 + e_{2+v};
// position 0 adds 10·e_0. Keys are the inputs (W_k = I); with `hot`, every query is 10·e_0
// (W_q maps e_1 to 10·e_0), so the logit is 100 at position 0 and 0 elsewhere; without,
// queries are 0 and attention is uniform.
std::unique_ptr<Model<float>> hand_built(bool hot, bool causal) {
  ModelConfig c;
  c.vocab = 8;
  c.width = 16;
  c.heads = 1;
  c.layers = 1;
  c.mlp = false;
  c.scheme = Scheme::pre;
  c.norm = NormKind::none;
  c.pos = PosEncoding::learned;
  c.max_len = 4096;
  c.causal = causal;
  c.beta = 4.0;  // scale beta / sqrt(16) = 1
  auto m = std::make_unique<Model<float>>(c);
  std::vector<float>& p = m->params();
  std::fill(p.begin(), p.end(), 0.0f);
  const int D = c.width;
  auto at = [&](const std::string& name) { return p.data() + m->layout().find(name)->offset; };
  float* embed = at("embed.weight");
  for (int v = 0; v < c.vocab; ++v) {
    embed[v * D + 1] = 1;
    embed[v * D + 2 + v] = 1;
  }
  at("pos.weight")[0] = 10;
  float* q = at("layers.0.attn.q.weight");
  if (hot) q[0 * D + 1] = 10;
  for (const char* name :
       {"layers.0.attn.k.weight", "layers.0.attn.v.weight", "layers.0.attn.o.weight"}) {
    for (int d = 0; d < D; ++d) at(name)[d * D + d] = 1;
  }
  return m;
}

SweepConfig sweep(int64_t query_rows) {
  SweepConfig s;
  s.lengths = {2, 16, 256, 4096};
  s.samples = 4;
  s.query_rows = query_rows;
  return s;
}

TEST(DispersionProbe, OneHotAttentionHasMaxWeightOneAndEntropyZero) {
  for (bool causal : {true, false}) {
    auto m = hand_built(true, causal);
    const DispersionResult r = run_dispersion_probe(*m, ProbeInput::random(8), sweep(3));
    ASSERT_EQ(r.rows.size(), 4u);
    for (const DispersionRow& row : r.rows) {
      EXPECT_EQ(row.rows, 4 * std::min<int64_t>(3, row.length));
      EXPECT_NEAR(row.max_weight_mean, 1.0, 1e-12) << "N " << row.length;
      EXPECT_NEAR(row.entropy_mean, 0.0, 1e-12) << "N " << row.length;
      EXPECT_NEAR(row.max_weight_sd, 0.0, 1e-12);
    }
  }
}

TEST(DispersionProbe, UniformAttentionHasEntropyLnKeys) {
  // The last position: N keys, causal or not.
  for (bool causal : {true, false}) {
    auto m = hand_built(false, causal);
    const DispersionResult r = run_dispersion_probe(*m, ProbeInput::random(8), sweep(1));
    for (const DispersionRow& row : r.rows) {
      const double n = static_cast<double>(row.length);
      EXPECT_NEAR(row.entropy_mean, std::log(n), 1e-9) << "N " << row.length;
      EXPECT_NEAR(row.uniform_entropy, std::log(n), 1e-12);
      EXPECT_NEAR(row.max_weight_mean, 1.0 / n, 1e-12);
    }
  }
  // Every position of a causal sequence of 16: the mean of ln(t + 1) over t = 0..15.
  auto m = hand_built(false, true);
  SweepConfig s = sweep(16);
  s.lengths = {16};
  const DispersionResult r = run_dispersion_probe(*m, ProbeInput::random(8), s);
  double mean_ln = 0, mean_inv = 0;
  for (int t = 0; t < 16; ++t) {
    mean_ln += std::log(t + 1.0) / 16;
    mean_inv += 1.0 / (t + 1) / 16;
  }
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_NEAR(r.rows[0].entropy_mean, mean_ln, 1e-9);
  EXPECT_NEAR(r.rows[0].uniform_entropy, mean_ln, 1e-12);
  EXPECT_NEAR(r.rows[0].max_weight_mean, mean_inv, 1e-12);
  EXPECT_GT(r.rows[0].entropy_sd, 0.5);  // rows differ: ln 1 … ln 16
}

}  // namespace
}  // namespace normlab
