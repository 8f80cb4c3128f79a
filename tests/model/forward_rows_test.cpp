// The inference path (streaming attention, scored rows only) gives the training forward's
// logits, for every scheme, positional encoding and attention mask.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "normlab/model.hpp"
#include "normlab/rng.hpp"

namespace normlab {
namespace {

struct Case {
  Scheme scheme;
  PosEncoding pos;
  bool causal;
  int layers;
};

class ForwardRows : public ::testing::TestWithParam<Case> {};

TEST_P(ForwardRows, MatchesTrainingForward) {
  ModelConfig c;
  c.vocab = 11;
  c.width = 16;
  c.heads = 2;
  c.layers = GetParam().layers;
  c.mlp = true;
  c.scheme = GetParam().scheme;
  c.norm = c.scheme == Scheme::ngpt ? NormKind::l2 : NormKind::layernorm;
  c.pos = GetParam().pos;
  c.causal = GetParam().causal;
  c.max_len = 600;
  c.init_std = 0.3;
  Model<float> m(c);
  m.init(3);
  // Long enough that the streaming kernel crosses several key blocks of 256.
  const int64_t B = 2, T = 600, F = 2;
  Rng rng(9);
  std::vector<int32_t> tokens(B * T * F);
  for (auto& t : tokens) t = rng.below(3) == 0 ? -1 : static_cast<int32_t>(rng.below(c.vocab));
  const float* full = m.forward(tokens.data(), B, T, F);
  std::vector<float> expected(full, full + B * T * c.vocab);
  const std::vector<int64_t> rows = {0, 5, 299, T - 1, T, T + 257, 2 * T - 1};
  const float* got = m.forward_rows(tokens.data(), B, T, F, rows);
  double worst = 0;
  for (size_t k = 0; k < rows.size(); ++k) {
    for (int v = 0; v < c.vocab; ++v) {
      const double e = expected[rows[k] * c.vocab + v];
      worst = std::max(worst, std::abs(got[k * c.vocab + v] - e) / (1e-3 + std::abs(e)));
    }
  }
  EXPECT_LT(worst, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, ForwardRows,
    ::testing::Values(Case{Scheme::pre, PosEncoding::none, true, 1},
                      Case{Scheme::post, PosEncoding::rope, true, 2},
                      Case{Scheme::peri_init, PosEncoding::sinusoidal, false, 2},
                      Case{Scheme::post_attn, PosEncoding::learned, true, 1},
                      Case{Scheme::ngpt, PosEncoding::none, false, 2},
                      Case{Scheme::deepnorm, PosEncoding::none, true, 3},
                      Case{Scheme::mix, PosEncoding::rope, false, 2},
                      Case{Scheme::sqrt_scaling, PosEncoding::none, true, 2}));

}  // namespace
}  // namespace normlab

namespace normlab {
namespace {

// Training with listed rows (only scored rows reach the unembedding) gives the gradients of
// the full forward with the other rows unscored.
TEST(ForwardListedRows, GradientsMatchTheFullForward) {
  for (Scheme scheme : {Scheme::pre, Scheme::post, Scheme::ngpt, Scheme::peri}) {
    ModelConfig c;
    c.vocab = 9;
    c.width = 8;
    c.heads = 2;
    c.layers = 2;
    c.scheme = scheme;
    c.norm = scheme == Scheme::ngpt ? NormKind::l2 : NormKind::layernorm;
    c.init_std = 0.3;
    Model<double> m(c);
    m.init(4);
    const int64_t B = 3, T = 5, N = B * T, V = c.vocab;
    Rng rng(2);
    std::vector<int32_t> tokens(N);
    for (auto& t : tokens) t = static_cast<int32_t>(rng.below(V));
    const std::vector<int64_t> rows = {2, 4, 9, 14};
    std::vector<double> dlogits_rows(rows.size() * V);
    for (auto& d : dlogits_rows) d = rng.normal();
    std::vector<double> dlogits_full(N * V, 0.0);
    for (size_t k = 0; k < rows.size(); ++k) {
      std::copy(dlogits_rows.begin() + k * V, dlogits_rows.begin() + (k + 1) * V,
                dlogits_full.begin() + rows[k] * V);
    }
    const double* full = m.forward(tokens.data(), B, T, 1);
    std::vector<double> full_logits(full, full + N * V);
    m.zero_grads();
    m.backward(dlogits_full.data());
    const std::vector<double> expected = m.grads();
    const double* listed = m.forward(tokens.data(), B, T, 1, &rows);
    for (size_t k = 0; k < rows.size(); ++k) {
      for (int v = 0; v < V; ++v) {
        EXPECT_NEAR(listed[k * V + v], full_logits[rows[k] * V + v], 1e-12);
      }
    }
    m.zero_grads();
    m.backward(dlogits_rows.data());
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_NEAR(m.grads()[i], expected[i], 1e-12) << to_string(scheme) << " param " << i;
    }
  }
}

}  // namespace
}  // namespace normlab
