// The hyper_connections row (docs/schemes.md, "Hyper-connections"), HC and mHC:
//   - its tensors, by name, shape and init: A_m = e_{i mod n} for sublayer i (and mHC's H_pre
//     bias picking the same stream), A_r = I, B = 1, the dynamic parts 0;
//   - the weights the forward used (Model::hyper_mix): at init A_m picks stream i mod n; under
//     mHC with random weights every A_r is doubly stochastic, 0 < A_m < 1, 0 < B < 2; HC's
//     weights recomputed from the static and dynamic parts;
//   - Sinkhorn–Knopp alone: doubly stochastic output, and its backward against differences;
//   - the streams' output: with A_r = I and B = 1, stream(S) = n·e + n·Σ z (all streams equal);
//   - the fields: JSON written only when set, labels, NAME(n) variants, every refusal.
// Gradients (model_gradcheck_test: the row under every norm kind, HyperGradCheck for mHC and
// options), the inference path (forward_rows_test) and the PyTorch twin (twin_test) are checked
// where every other scheme is.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/hyper_conn.hpp"
#include "model/hyper_params.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"
#include "support/param_tensors.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

ModelConfig hyper_config(int streams = 4, bool sinkhorn = false, int layers = 3) {
  ModelConfig c = testing::small_model_config(Scheme::hyper_connections);
  c.layers = layers;
  c.norm = NormKind::rmsnorm;
  c.streams = streams;
  c.sinkhorn = sinkhorn;
  return c;
}

using testing::validation_error;

std::vector<int32_t> tokens(const ModelConfig& c, int64_t N, uint64_t seed) {
  Rng rng(seed);
  std::vector<int32_t> t(N);
  for (auto& x : t) x = static_cast<int32_t>(rng.below(c.vocab));
  return t;
}

std::string sublayer_prefix(int i) {
  return "layers." + std::to_string(i / 2) + (i % 2 == 0 ? ".attn" : ".mlp");
}

TEST(HyperConnections, TensorsInLayoutOrder) {
  Model<float> hc(hyper_config(3, false, 1));
  std::vector<std::string> names;
  for (const TensorSpec& t : hc.layout().tensors()) names.push_back(t.name);
  const std::vector<std::string> expected = {"embed.weight",
                                             "layers.0.attn.hc.norm.weight",
                                             "layers.0.attn.hc.static_alpha",
                                             "layers.0.attn.hc.static_beta",
                                             "layers.0.attn.hc.dynamic_alpha_fn",
                                             "layers.0.attn.hc.dynamic_alpha_scale",
                                             "layers.0.attn.hc.dynamic_beta_fn",
                                             "layers.0.attn.hc.dynamic_beta_scale",
                                             "layers.0.attn.norm_in.weight",
                                             "layers.0.attn.q.weight",
                                             "layers.0.attn.k.weight",
                                             "layers.0.attn.v.weight",
                                             "layers.0.attn.o.weight",
                                             "layers.0.mlp.hc.norm.weight",
                                             "layers.0.mlp.hc.static_alpha",
                                             "layers.0.mlp.hc.static_beta",
                                             "layers.0.mlp.hc.dynamic_alpha_fn",
                                             "layers.0.mlp.hc.dynamic_alpha_scale",
                                             "layers.0.mlp.hc.dynamic_beta_fn",
                                             "layers.0.mlp.hc.dynamic_beta_scale",
                                             "layers.0.mlp.norm_in.weight",
                                             "layers.0.mlp.up.weight",
                                             "layers.0.mlp.down.weight",
                                             "final_norm.weight",
                                             "unembed.weight"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(hc.layout().find("layers.0.attn.hc.static_alpha")->shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(hc.layout().find("layers.0.attn.hc.dynamic_alpha_fn")->shape,
            (std::vector<int64_t>{8, 4}));
  Model<float> mhc(hyper_config(3, true, 1));
  names.clear();
  for (const TensorSpec& t : mhc.layout().tensors()) {
    if (t.name.starts_with("layers.0.attn.hc.")) names.push_back(t.name);
  }
  EXPECT_EQ(
      names,
      (std::vector<std::string>{
          "layers.0.attn.hc.phi_pre", "layers.0.attn.hc.phi_post", "layers.0.attn.hc.phi_res",
          "layers.0.attn.hc.alpha_pre", "layers.0.attn.hc.alpha_post", "layers.0.attn.hc.alpha_res",
          "layers.0.attn.hc.b_pre", "layers.0.attn.hc.b_post", "layers.0.attn.hc.b_res"}));
  EXPECT_EQ(mhc.layout().find("layers.0.attn.hc.phi_res")->shape, (std::vector<int64_t>{24, 9}));
  for (const TensorSpec& t : mhc.layout().tensors()) {
    if (t.name.find(".hc.") != std::string::npos) {
      EXPECT_FALSE(t.decay) << t.name;
    }
  }
}

// Sublayer i reads stream i mod n at init: A_m = e_{i mod n} (HC), H_pre's bias 0 there and −8
// elsewhere (mHC); A_r = I, B = 1. Checked in the parameters and in the weights the forward used.
TEST(HyperConnections, InitReadsStreamIModN) {
  for (const bool sinkhorn : {false, true}) {
    const ModelConfig c = hyper_config(4, sinkhorn, 3);  // 6 sublayers: streams 0 1 2 3 0 1
    Model<double> m(c);
    m.init(5);
    const int n = c.streams, S = m.num_sublayers();
    for (int i = 0; i < S; ++i) {
      const std::string p = sublayer_prefix(i) + ".hc.";
      for (int s = 0; s < n; ++s) {
        if (!sinkhorn) {
          const double* alpha =
              m.params().data() + testing::tensor_named(m, p + "static_alpha").offset;
          EXPECT_EQ(alpha[s * (n + 1)], s == i % n ? 1.0 : 0.0) << p << " stream " << s;
          for (int j = 0; j < n; ++j) EXPECT_EQ(alpha[s * (n + 1) + 1 + j], s == j ? 1.0 : 0.0);
          EXPECT_EQ(m.params()[testing::tensor_named(m, p + "static_beta").offset + s], 1.0);
        } else {
          EXPECT_EQ(m.params()[testing::tensor_named(m, p + "b_pre").offset + s],
                    s == i % n ? 0.0 : -8.0);
        }
      }
    }
    const int64_t B = 2, T = 3, N = B * T;
    const std::vector<int32_t> tok = tokens(c, N, 1);
    m.forward(tok.data(), B, T);
    const int W = n * (n + 2);
    for (int i = 0; i < S; ++i) {
      const double* mix = m.hyper_mix(i);
      for (int64_t r = 0; r < N; ++r) {
        const double* w = mix + r * W;
        for (int s = 0; s < n; ++s) {
          const double expected_m = s == i % n ? (sinkhorn ? 0.5 : 1.0) : 0.0;
          EXPECT_NEAR(w[s], expected_m, sinkhorn ? 1e-3 : 0.0) << "sublayer " << i;
          for (int j = 0; j < n; ++j) EXPECT_NEAR(w[n + s * n + j], s == j ? 1.0 : 0.0, 2e-3);
          EXPECT_NEAR(w[n + n * n + s], 1.0, sinkhorn ? 1e-12 : 0.0);
        }
      }
    }
  }
}

TEST(HyperConnections, SinkhornIsDoublyStochasticAndDifferentiable) {
  Rng rng(3);
  for (const int n : {2, 3, 4, 6}) {
    std::vector<double> L(n * n), trace((2 * kSinkhornIters + 1) * n * n);
    for (auto& v : L) v = 2.0 * rng.normal();  // far from uniform: several iterations needed
    sinkhorn_forward(L.data(), n, kSinkhornIters, trace.data());
    const double* M = trace.data() + 2 * kSinkhornIters * n * n;
    for (int a = 0; a < n; ++a) {
      double row = 0, col = 0;
      for (int b = 0; b < n; ++b) {
        EXPECT_GT(M[a * n + b], 0.0);
        row += M[a * n + b];
        col += M[b * n + a];
      }
      // The last step normalizes the columns: exact. The rows are within the convergence of
      // 20 iterations (1.5e-4 at worst here); a matrix that was not projected misses by O(1).
      EXPECT_NEAR(row, 1.0, 1e-3) << "n " << n << " row " << a;
      EXPECT_NEAR(col, 1.0, 1e-12) << "n " << n << " column " << a;
    }
    // Backward of Σ c ⊙ M against central differences.
    std::vector<double> c(n * n), dL(n * n);
    for (auto& v : c) v = rng.normal();
    sinkhorn_backward(trace.data(), n, kSinkhornIters, c.data(), dL.data());
    auto f = [&](const std::vector<double>& x) {
      std::vector<double> t(trace.size());
      sinkhorn_forward(x.data(), n, kSinkhornIters, t.data());
      double sum = 0;
      for (int k = 0; k < n * n; ++k) sum += c[k] * t[2 * kSinkhornIters * n * n + k];
      return sum;
    };
    for (int k = 0; k < n * n; ++k) {
      std::vector<double> up = L, down = L;
      up[k] += 1e-6;
      down[k] -= 1e-6;
      EXPECT_NEAR(dL[k], (f(up) - f(down)) / 2e-6, 1e-7) << "n " << n << " entry " << k;
    }
  }
}

// mHC with random weights: every row's A_r = H_resᵀ is doubly stochastic, A_m ∈ (0, 1) and
// B ∈ (0, 2); HC's weights are its static weights plus the scaled tanh of N(H) W.
TEST(HyperConnections, WeightsOfTheForward) {
  for (const bool sinkhorn : {false, true}) {
    const ModelConfig c = hyper_config(3, sinkhorn, 2);
    Model<double> m(c);
    m.init(5);
    randomize_hyper(m, 7);
    const int64_t B = 2, T = 4, N = B * T;
    const std::vector<int32_t> tok = tokens(c, N, 2);
    m.forward(tok.data(), B, T);
    const int n = c.streams, W = n * (n + 2), D = c.width;
    for (int i = 0; i < m.num_sublayers(); ++i) {
      const double* mix = m.hyper_mix(i);
      double spread = 0;  // how far A_r is from I: the check must not pass by the init alone
      for (int64_t r = 0; r < N; ++r) {
        const double* w = mix + r * W;
        for (int s = 0; s < n; ++s) {
          if (!sinkhorn) continue;
          EXPECT_GT(w[s], 0.0);
          EXPECT_LT(w[s], 1.0);
          EXPECT_GT(w[n + n * n + s], 0.0);
          EXPECT_LT(w[n + n * n + s], 2.0);
          double into = 0, from = 0;
          for (int j = 0; j < n; ++j) {
            EXPECT_GE(w[n + s * n + j], 0.0);
            into += w[n + j * n + s];
            from += w[n + s * n + j];
            spread = std::max(spread, std::abs(w[n + s * n + j] - (s == j ? 1.0 : 0.0)));
          }
          // into = Σ_j H_res[s][j], a row of H_res: within the convergence of 20 iterations
          // (3e-6 here); from = a column: exact.
          EXPECT_NEAR(into, 1.0, 1e-4) << "sublayer " << i << " row " << r;
          EXPECT_NEAR(from, 1.0, 1e-9) << "sublayer " << i << " row " << r;
        }
      }
      if (sinkhorn) {
        EXPECT_GT(spread, 0.05) << "sublayer " << i;
      }
    }
    if (sinkhorn) continue;
    // HC, sublayer 0: every stream is the embedding e, so H̄_s = rmsnorm(e) (gain 1) for each s.
    const std::string p = "layers.0.attn.hc.";
    const double* Sa = m.params().data() + testing::tensor_named(m, p + "static_alpha").offset;
    const double* Sb = m.params().data() + testing::tensor_named(m, p + "static_beta").offset;
    const double* Wa = m.params().data() + testing::tensor_named(m, p + "dynamic_alpha_fn").offset;
    const double* Wb = m.params().data() + testing::tensor_named(m, p + "dynamic_beta_fn").offset;
    const double sa = m.params()[testing::tensor_named(m, p + "dynamic_alpha_scale").offset];
    const double sb = m.params()[testing::tensor_named(m, p + "dynamic_beta_scale").offset];
    const double* gain = m.params().data() + testing::tensor_named(m, p + "norm.weight").offset;
    const double* mix = m.hyper_mix(0);
    for (int64_t r = 0; r < N; ++r) {
      // stream(0) is h = Σ A_m[s] e, so e = h / Σ A_m.
      double sum_m = 0;
      for (int s = 0; s < n; ++s) sum_m += mix[r * W + s];
      std::vector<double> e(D), hb(D);
      double ss = 0;
      for (int d = 0; d < D; ++d) {
        e[d] = m.stream(0)[r * D + d] / sum_m;
        ss += e[d] * e[d];
      }
      for (int d = 0; d < D; ++d) hb[d] = e[d] / std::sqrt(ss / D + c.norm_eps) * gain[d];
      for (int s = 0; s < n; ++s) {
        for (int col = 0; col <= n; ++col) {
          double a = 0;
          for (int d = 0; d < D; ++d) a += hb[d] * Wa[d * (n + 1) + col];
          const double expected = Sa[s * (n + 1) + col] + sa * std::tanh(a);
          const double got = col == 0 ? mix[r * W + s] : mix[r * W + n + s * n + col - 1];
          EXPECT_NEAR(got, expected, 1e-12);
        }
        double b = 0;
        for (int d = 0; d < D; ++d) b += hb[d] * Wb[d];
        EXPECT_NEAR(mix[r * W + n + n * n + s], Sb[s] + sb * std::tanh(b), 1e-12);
      }
    }
  }
}

// At init (A_r = I, B = 1, A_m one-hot) every stream is e + Σ_{k<i} z_k, so the output, the
// sum of the n streams, is n times that: n · (e + Σ z).
TEST(HyperConnections, OutputIsTheSumOfTheStreams) {
  const ModelConfig c = hyper_config(3, false, 2);
  Model<double> m(c);
  m.init(5);
  const int64_t B = 1, T = 5, N = B * T;
  const std::vector<int32_t> tok = tokens(c, N, 4);
  m.forward(tok.data(), B, T);
  const int D = c.width, S = m.num_sublayers();
  for (int64_t k = 0; k < N * D; ++k) {
    double stream = m.stream(0)[k];  // h_0 = e
    for (int i = 0; i < S; ++i) {
      EXPECT_NEAR(m.stream(i)[k], stream, 1e-12) << "sublayer " << i;  // h_i = e + Σ_{k<i} z_k
      stream += m.branch_output(i)[k];
    }
    EXPECT_NEAR(m.stream(S)[k], c.streams * stream, 1e-12);
  }
}

TEST(HyperConnections, FieldsInJsonOnlyWhenSet) {
  ModelConfig pre;
  const nlohmann::json j = to_json(pre);
  EXPECT_FALSE(j.contains("streams"));
  EXPECT_FALSE(j.contains("sinkhorn"));
  ModelConfig c = hyper_config(4, false);
  EXPECT_FALSE(to_json(c).contains("streams"));
  c.streams = 2;
  c.sinkhorn = true;
  const nlohmann::json k = to_json(c);
  EXPECT_EQ(k.at("streams"), 2);
  EXPECT_EQ(k.at("sinkhorn"), true);
  EXPECT_EQ(model_config_from_json(k).streams, 2);
  EXPECT_TRUE(model_config_from_json(k).sinkhorn);
  EXPECT_EQ(scheme_label(c), "hyper_connections(2)[sinkhorn]");
  EXPECT_EQ(scheme_label(hyper_config(4, false)), "hyper_connections(4)");
}

TEST(HyperConnections, Refusals) {
  ModelConfig pre;
  pre.streams = 3;
  EXPECT_EQ(validation_error(pre),
            "streams = 3 applies only to scheme hyper_connections (got scheme pre)");
  pre.streams = 4;
  pre.sinkhorn = true;
  EXPECT_EQ(validation_error(pre),
            "sinkhorn applies only to scheme hyper_connections (got scheme pre)");
  ModelConfig c = hyper_config(1);
  EXPECT_EQ(validation_error(c), "streams must be an integer from 2 to 64 (got 1)");
  c = hyper_config();
  c.placement = parse_placement("all: in+out");
  EXPECT_EQ(validation_error(c),
            "placement cannot change scheme hyper_connections, which takes no overrides: its "
            "block is defined with exactly its own norms");
  c = hyper_config();
  c.attn_norms = parse_norm_placement("out");
  EXPECT_NE(validation_error(c).find("attn_norms cannot change scheme hyper_connections"),
            std::string::npos);
  c = hyper_config();
  c.qk_norm = QkNorm::l2;
  EXPECT_NE(validation_error(c).find("qk_norm = l2 cannot change scheme hyper_connections"),
            std::string::npos);
  c = hyper_config();
  c.norm = NormKind::none;
  EXPECT_NE(validation_error(c).find("scheme hyper_connections needs a norm"), std::string::npos);
  for (const bool sinkhorn : {false, true}) {
    c = hyper_config(2, sinkhorn);
    c.final_norm = Toggle::off;
    c.embed_norm = Toggle::on;
    EXPECT_EQ(validation_error(c), "");
  }
}

}  // namespace
}  // namespace normlab
