// The bridge to models: the extracted per-layer matrices reproduce the model's own attention
// output, and `normlab particles --from-checkpoint` writes one row per layer.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "normlab/base/errors.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/model/model.hpp"
#include "normlab/particles/dynamics.hpp"
#include "normlab/particles/layer_weights.hpp"
#include "normlab/particles/model_weights.hpp"
#include "particles/test_util.hpp"

namespace normlab::particles {
namespace {

using testing::fresh_dir;
using testing::run_cli;

ModelConfig small_model(normlab::Scheme scheme, bool causal, bool rope = false) {
  ModelConfig c;
  c.scheme = scheme;
  c.norm = NormKind::rmsnorm;
  c.vocab = 16;
  c.width = 16;
  c.heads = 2;
  c.layers = 3;
  c.mlp = false;
  c.causal = causal;
  c.beta = 1.3;
  c.init_std = 0.3;    // logits of order 1, so the softmax is far from uniform
  c.norm_eps = 1e-12;  // the ODE's norm has no epsilon
  // Post's layer-0 input is the stream itself, taken as ρ_0 θ_j with one ρ_0: exact when every
  // token has the same norm, as after an embedding norm.
  if (scheme == normlab::Scheme::post) c.embed_norm = Toggle::on;
  if (rope) {
    c.pos = PosEncoding::rope;
    c.rope_base = 7.0;  // a small base: even the late pairs turn noticeably over 9 positions
  }
  return c;
}

// The model's layer-0 attention output y_j (B = 1, T tokens) against the simulator's A_j built
// from the extracted Q_h, K_h, V_h and β. For pre, dθ_j/dt = P A_j / r_j and dr_j/dt = ⟨θ_j, A_j⟩,
// so A_j = r_j dθ_j/dt + (dr_j/dt) θ_j. For post, dθ_j/dt = P A_j = P y_j / ρ_0 (the post law has
// no radial part to recover ⟨θ_j, A_j⟩ from).
void expect_first_layer_attention_reproduced(normlab::Scheme scheme, bool causal,
                                             bool rope = false) {
  const ModelConfig mc = small_model(scheme, causal, rope);
  Model<float> model(mc);
  model.init(1);
  const int T = 9, D = mc.width;
  std::vector<int32_t> tokens(T);
  for (int t = 0; t < T; ++t) tokens[t] = (5 * t + 3) % mc.vocab;
  model.forward(tokens.data(), 1, T);
  const float* x = model.stream(0);
  const float* y_model = model.branch_output(0);  // attention output, before any output norm

  std::vector<double> theta(static_cast<size_t>(T) * D), radii(T);
  double norm_sum = 0;
  for (int j = 0; j < T; ++j) {
    double ss = 0;
    for (int a = 0; a < D; ++a) ss += static_cast<double>(x[j * D + a]) * x[j * D + a];
    radii[j] = std::sqrt(ss);
    norm_sum += radii[j];
    for (int a = 0; a < D; ++a) theta[j * D + a] = x[j * D + a] / radii[j];
  }
  const double rho0 = norm_sum / T;
  ModelParticles mp = extract_model_particles(model, rho0);
  ASSERT_EQ(mp.layers.size(), 3u);
  ASSERT_EQ(mp.layers[0].heads.size(), 2u);
  ParticlesConfig c = mp.config;
  c.n = T;
  c.init = InitKind::file;
  c.init_file = "x";
  c.qkv_file = "x";
  ParticleSystem system(c, LayerWeights::list(mp.layers), false);
  std::vector<double> y = system.initial_state(theta);
  std::copy(radii.begin(), radii.end(), y.end() - T);
  std::vector<double> dy(y.size());
  system.rhs(0.0, 0, y.data(), dy.data());

  double max_err = 0, max_y = 0;
  for (int j = 0; j < T; ++j) {
    const double* th = &theta[j * D];
    std::vector<double> a(D), ym(D);
    double ym_dot = 0;
    for (int b = 0; b < D; ++b) {
      ym[b] = y_model[j * D + b];
      ym_dot += ym[b] * th[b];
    }
    for (int b = 0; b < D; ++b) {
      if (scheme == normlab::Scheme::pre) {
        a[b] = radii[j] * dy[j * D + b] + dy[T * D + j] * th[b];
      } else {  // post: dθ/dt = P(y/ρ_0)
        a[b] = dy[j * D + b];
        ym[b] = (ym[b] - ym_dot * th[b]) / rho0;
      }
      max_err = std::max(max_err, std::abs(a[b] - ym[b]));
      max_y = std::max(max_y, std::abs(ym[b]));
    }
  }
  EXPECT_GT(max_y, 1e-3);
  // Float model against the double ODE.
  EXPECT_LT(max_err, 2e-5 * max_y) << "max |A - y| " << max_err << ", max |y| " << max_y;
}

TEST(ParticlesBridge, ExtractedMatricesReproduceTheFirstLayerAttentionPreCausal) {
  expect_first_layer_attention_reproduced(normlab::Scheme::pre, true);
}

TEST(ParticlesBridge, ExtractedMatricesReproduceTheFirstLayerAttentionPreBidirectional) {
  expect_first_layer_attention_reproduced(normlab::Scheme::pre, false);
}

TEST(ParticlesBridge, ExtractedMatricesReproduceTheFirstLayerAttentionPost) {
  expect_first_layer_attention_reproduced(normlab::Scheme::post, true);
}

// RoPE models (the depth study's): the ODE rotates Q θ_j and K θ_j by position j as the model
// rotates its queries and keys, so the first layer's attention is reproduced as well.
TEST(ParticlesBridge, ExtractedMatricesReproduceTheFirstLayerAttentionPreCausalRope) {
  expect_first_layer_attention_reproduced(normlab::Scheme::pre, true, true);
}

TEST(ParticlesBridge, ExtractedMatricesReproduceTheFirstLayerAttentionPostBidirectionalRope) {
  expect_first_layer_attention_reproduced(normlab::Scheme::post, false, true);
}

TEST(ParticlesBridge, CliWritesOneRowPerLayer) {
  const std::filesystem::path dir = fresh_dir("bridge_cli");
  const std::string ckpt = (dir / "model").string();
  auto r = run_cli(
      "init --scheme pre --norm rmsnorm --vocab 16 --width 16 --layers 3 --no-mlp "
      "--seed 1 --out " +
      ckpt);
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string csv = (dir / "bridge.csv").string();
  r = run_cli("particles --from-checkpoint " + ckpt + " --batch 2 --seq-len 8 --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("predicted cos"), std::string::npos) << r.output;
  const CsvTable t = read_csv_table(csv);
  EXPECT_EQ(csv_row(t.columns), "layer,predicted_cos,measured_cos\n");
  ASSERT_EQ(t.rows.size(), 4u);  // layers 0, 1, 2 and the stream leaving layer 2
  for (size_t l = 0; l < 4; ++l) EXPECT_EQ(t.cell(l, "layer"), std::to_string(l));
  // At layer 0 both are the cosine of the same embeddings.
  EXPECT_NEAR(std::stod(t.cell(0, "predicted_cos")), std::stod(t.cell(0, "measured_cos")), 1e-5);
  std::filesystem::remove_all(dir);
}

TEST(ParticlesBridge, SchemesWithoutAParticleLawAreRefused) {
  const std::filesystem::path dir = fresh_dir("bridge_attnres");
  const std::string ckpt = (dir / "model").string();
  auto r = run_cli("init --scheme attnres --vocab 16 --width 16 --layers 2 --seed 1 --out " + ckpt);
  ASSERT_EQ(r.code, 0) << r.output;
  r = run_cli("particles --from-checkpoint " + ckpt);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("scheme attnres has no particle law; --from-checkpoint allows pre, "
                          "post, peri, peri_init and mix"),
            std::string::npos)
      << r.output;
  r = run_cli("particles --from-checkpoint " + ckpt + " --scheme pre");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--scheme does not apply with --from-checkpoint"), std::string::npos)
      << r.output;
  std::filesystem::remove_all(dir);
}

// Norms other than rmsnorm and l2 are refused, saying why: the pointwise kinds and layernorm
// are not functions of the direction, scalenorm's per-norm learned scale is not in the law.
TEST(ParticlesBridge, NormsWithoutAParticleLawAreRefused) {
  for (NormKind k : {NormKind::layernorm, NormKind::dyt, NormKind::derf, NormKind::scalenorm}) {
    ModelConfig c = small_model(normlab::Scheme::pre, true);
    c.norm = k;
    try {
      check_model_has_particle_law(c);
      ADD_FAILURE() << to_string(k) << " accepted";
    } catch (const UsageError& e) {
      const std::string why = k == NormKind::scalenorm ? "learned scale in every norm"
                                                       : "not a function of the token direction";
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("allows rmsnorm and l2"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace normlab::particles
