// The two-stream rows, resi_dual and siamesenorm (docs/schemes.md, "Two streams"):
//   - what they resolve to: their slots, SiameseNorm's 1/sqrt(2(l+1)) per layer, the rule;
//   - their tensors, by name and in layout order;
//   - the streams, recomputed from the model's public views at init (every gain 1) with the
//     papers' formulas: y = the embedding + the sum of the branch outputs, x's update, and the
//     logits from the merge;
//   - every override refused, with its words.
// Gradients (model_gradcheck_test), the inference path (forward_rows_test) and the PyTorch
// twin (twin_test) are checked where every other scheme is.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "normlab/base/errors.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

ModelConfig two_stream_config(Scheme scheme, int layers = 2, bool mlp = true) {
  ModelConfig c = testing::small_model_config(scheme);
  c.layers = layers;
  c.mlp = mlp;
  c.norm = NormKind::rmsnorm;
  return c;
}

using testing::validation_error;

std::vector<std::string> names(const Model<float>& m) {
  std::vector<std::string> out;
  for (const TensorSpec& t : m.layout().tensors()) out.push_back(t.name);
  return out;
}

// rmsnorm of one row (D) with unit gain: x / sqrt(mean(x²) + eps).
std::vector<double> rms(const double* x, int D, double eps) {
  double ss = 0;
  for (int d = 0; d < D; ++d) ss += x[d] * x[d];
  const double r = 1.0 / std::sqrt(ss / D + eps);
  std::vector<double> y(D);
  for (int d = 0; d < D; ++d) y[d] = x[d] * r;
  return y;
}

TEST(TwoStream, ResolvesToTheRowsSlotsAndRule) {
  const ResolvedScheme r = resolve_scheme(two_stream_config(Scheme::resi_dual));
  EXPECT_EQ(r.residual_mode, ResidualMode::two_stream);
  EXPECT_FALSE(r.two_stream.renorm_x || r.two_stream.input_reads_y || r.two_stream.merge_norm_x);
  EXPECT_FALSE(r.final_norm);
  for (const SublayerSlots& s : r.sublayers) {
    EXPECT_TRUE(s.norm_post && !s.norm_in && !s.norm_out);
    EXPECT_EQ(s.branch, ScaleSpec{});
  }
  const ResolvedScheme s = resolve_scheme(two_stream_config(Scheme::siamesenorm, 3));
  EXPECT_TRUE(s.two_stream.renorm_x && s.two_stream.input_reads_y && s.two_stream.merge_norm_x);
  EXPECT_TRUE(s.final_norm);
  ASSERT_EQ(s.sublayers.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    const SublayerSlots& slots = s.sublayers[i];
    EXPECT_TRUE(slots.norm_in && !slots.norm_out && !slots.norm_post);
    EXPECT_EQ(slots.branch.kind, ScaleKind::constant);
    // c_l = sqrt(2(l+1)), l the layer: attention and MLP of a layer share it.
    EXPECT_DOUBLE_EQ(slots.branch.value, 1.0 / std::sqrt(2.0 * (i / 2 + 1))) << i;
    EXPECT_EQ(slots.residual, ScaleSpec{});
  }
  // The other rows keep no second stream.
  EXPECT_FALSE(resolve_scheme(two_stream_config(Scheme::pre)).two_stream.input_reads_y);
  EXPECT_FALSE(mixes_over_depth(ResidualMode::two_stream));
}

TEST(TwoStream, TensorsInLayoutOrder) {
  const Model<float> r(two_stream_config(Scheme::resi_dual, 1));
  EXPECT_EQ(names(r), (std::vector<std::string>{
                          "embed.weight", "layers.0.attn.q.weight", "layers.0.attn.k.weight",
                          "layers.0.attn.v.weight", "layers.0.attn.o.weight",
                          "layers.0.attn.norm_post.weight", "layers.0.mlp.up.weight",
                          "layers.0.mlp.down.weight", "layers.0.mlp.norm_post.weight",
                          "merge.y_norm.weight", "unembed.weight"}));
  const Model<float> s(two_stream_config(Scheme::siamesenorm, 1, false));
  EXPECT_EQ(names(s),
            (std::vector<std::string>{
                "embed.weight", "layers.0.attn.x_norm.weight", "layers.0.attn.y_norm.weight",
                "layers.0.attn.norm_in.weight", "layers.0.attn.q.weight", "layers.0.attn.k.weight",
                "layers.0.attn.v.weight", "layers.0.attn.o.weight", "merge.x_norm.weight",
                "merge.y_norm.weight", "final_norm.weight", "unembed.weight"}));
}

// Logits (N, V) of h (N, D) times U (V, D) transposed.
std::vector<double> unembed(const Model<double>& m, const std::vector<double>& h, int64_t N) {
  const ModelConfig& c = m.config();
  const double* U = m.params().data() + m.layout().find("unembed.weight")->offset;
  std::vector<double> logits(N * c.vocab, 0.0);
  for (int64_t n = 0; n < N; ++n) {
    for (int v = 0; v < c.vocab; ++v) {
      for (int d = 0; d < c.width; ++d)
        logits[n * c.vocab + v] += h[n * c.width + d] * U[v * c.width + d];
    }
  }
  return logits;
}

struct ForwardRun {
  std::vector<int32_t> tokens;
  const double* logits = nullptr;
  int64_t N = 0;
};

ForwardRun run(Model<double>& m) {
  ForwardRun r;
  const int64_t B = 2, T = 5;
  Rng rng(5);
  for (int64_t n = 0; n < B * T; ++n) {
    r.tokens.push_back(static_cast<int32_t>(rng.below(m.config().vocab)));
  }
  r.N = B * T;
  r.logits = m.forward(r.tokens.data(), B, T);
  return r;
}

TEST(TwoStream, ResiDualStreamsFollowThePaper) {
  Model<double> m(two_stream_config(Scheme::resi_dual));
  m.init(3);
  const ForwardRun r = run(m);
  const int D = m.config().width, S = m.num_sublayers();
  const double eps = m.config().norm_eps;
  // y_S = x_0 + Σ_i f_i(x_i); x_{i+1} = N(x_i + f_i(x_i)); h = x_S + N(y_S).
  std::vector<double> h(r.N * D), y(m.stream(0), m.stream(0) + r.N * D);
  double worst = 0;
  for (int i = 0; i < S; ++i) {
    const double* x = m.stream(i);
    const double* z = m.branch_output_normed(i);
    for (int64_t n = 0; n < r.N; ++n) {
      std::vector<double> sum(D);
      for (int d = 0; d < D; ++d) sum[d] = x[n * D + d] + z[n * D + d];
      const std::vector<double> next = rms(sum.data(), D, eps);
      for (int d = 0; d < D; ++d) {
        worst = std::max(worst, std::abs(next[d] - m.stream(i + 1)[n * D + d]));
      }
    }
    for (int64_t k = 0; k < r.N * D; ++k) y[k] += z[k];
  }
  for (int64_t n = 0; n < r.N; ++n) {
    const std::vector<double> ny = rms(y.data() + n * D, D, eps);
    for (int d = 0; d < D; ++d) h[n * D + d] = m.stream(S)[n * D + d] + ny[d];
  }
  const std::vector<double> expected = unembed(m, h, r.N);
  for (size_t k = 0; k < expected.size(); ++k) {
    worst = std::max(worst, std::abs(expected[k] - r.logits[k]));
  }
  EXPECT_LT(worst, 1e-12);
}

TEST(TwoStream, SiameseNormStreamsFollowThePaper) {
  ModelConfig c = two_stream_config(Scheme::siamesenorm);
  c.final_norm = Toggle::off;  // the logits then read the merge N(x) + N(y) directly
  Model<double> m(c);
  m.init(3);
  const ForwardRun r = run(m);
  const int D = c.width, S = m.num_sublayers();
  const double eps = c.norm_eps;
  // Per sublayer of layer l: x̂ = N(x), f's input N_in(x̂ + N(y)), x' = x̂ + z / sqrt(2(l+1)),
  // y' = y + z; both streams start as the embedding.
  std::vector<double> y(m.stream(0), m.stream(0) + r.N * D);
  double worst = 0;
  for (int i = 0; i < S; ++i) {
    const double* x = m.stream(i);
    const double* z = m.branch_output_normed(i);
    const double c_l = std::sqrt(2.0 * (i / 2 + 1));
    for (int64_t n = 0; n < r.N; ++n) {
      const std::vector<double> xhat = rms(x + n * D, D, eps), yhat = rms(y.data() + n * D, D, eps);
      std::vector<double> v(D);
      for (int d = 0; d < D; ++d) v[d] = xhat[d] + yhat[d];
      const std::vector<double> u = rms(v.data(), D, eps);
      for (int d = 0; d < D; ++d) {
        worst = std::max(worst, std::abs(u[d] - m.branch_input(i)[n * D + d]));
        worst =
            std::max(worst, std::abs(xhat[d] + z[n * D + d] / c_l - m.stream(i + 1)[n * D + d]));
      }
    }
    for (int64_t k = 0; k < r.N * D; ++k) y[k] += z[k];
  }
  std::vector<double> h(r.N * D);
  for (int64_t n = 0; n < r.N; ++n) {
    const std::vector<double> nx = rms(m.stream(S) + n * D, D, eps),
                              ny = rms(y.data() + n * D, D, eps);
    for (int d = 0; d < D; ++d) h[n * D + d] = nx[d] + ny[d];
  }
  const std::vector<double> expected = unembed(m, h, r.N);
  for (size_t k = 0; k < expected.size(); ++k) {
    worst = std::max(worst, std::abs(expected[k] - r.logits[k]));
  }
  EXPECT_LT(worst, 1e-12);
}

TEST(TwoStream, OverridesAreRefusedWithTheirWords) {
  for (Scheme scheme : {Scheme::resi_dual, Scheme::siamesenorm}) {
    const std::string name = to_string(scheme);
    ModelConfig c = two_stream_config(scheme);
    c.placement = parse_placement("all: in+post");
    EXPECT_EQ(validation_error(c),
              "placement cannot change scheme " + name +
                  ", which takes no overrides: its block is defined with exactly its own norms");
    c = two_stream_config(scheme);
    c.attn_norms = parse_norm_placement("out");
    EXPECT_EQ(validation_error(c),
              "attn_norms cannot change scheme " + name +
                  ", which takes no overrides: its block is defined with exactly its own norms");
    c = two_stream_config(scheme);
    c.qk_norm = QkNorm::l2;
    EXPECT_EQ(validation_error(c), "qk_norm = l2 cannot change scheme " + name +
                                       ", which takes no overrides; allowed with " + name +
                                       ": qk_norm = none");
    c = two_stream_config(scheme);
    c.norm = NormKind::none;
    EXPECT_NE(validation_error(c).find("scheme " + name + " needs a norm"), std::string::npos)
        << validation_error(c);
    // Every norm kind but none, and the final norm either way.
    for (NormKind k : {NormKind::layernorm, NormKind::standardize, NormKind::l2, NormKind::dyt,
                       NormKind::derf, NormKind::scalenorm}) {
      c = two_stream_config(scheme);
      c.norm = k;
      c.final_norm = Toggle::on;
      EXPECT_EQ(validation_error(c), "") << name << " " << to_string(k);
    }
  }
}

}  // namespace
}  // namespace normlab
