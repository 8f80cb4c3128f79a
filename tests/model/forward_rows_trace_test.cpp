// The sublayer trace of forward_rows (what the probes read) holds, at the rows it names, the
// training forward's activations: stream in and out, per-head attention output, branch output
// before and after its norm, and q|k|v (AttnRes: the input is the sublayer's mixture, the
// output its record).
#include <gtest/gtest.h>

#include <algorithm>
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

class ForwardRowsTrace : public ::testing::TestWithParam<Case> {};

// Largest |a − e| over one row of D values, relative to the row's RMS (the two paths round
// differently: blocked attention with a polynomial exp against the streaming kernel).
double row_error(const float* a, const float* e, int D) {
  double worst = 0, ss = 0;
  for (int d = 0; d < D; ++d) {
    worst = std::max(worst, std::abs(double(a[d]) - e[d]));
    ss += double(e[d]) * e[d];
  }
  return worst / (std::sqrt(ss / D) + 1e-30);
}

TEST_P(ForwardRowsTrace, MatchesTrainingForwardActivations) {
  ModelConfig c;
  c.vocab = 11;
  c.width = 16;
  c.heads = 2;
  c.layers = GetParam().layers;
  c.scheme = GetParam().scheme;
  c.norm = c.scheme == Scheme::ngpt ? NormKind::l2 : NormKind::layernorm;
  c.pos = GetParam().pos;
  c.causal = GetParam().causal;
  c.max_len = 300;
  c.init_std = 0.3;
  Model<float> m(c);
  m.init(5);
  const int64_t B = 2, T = 300, D = c.width;
  Rng rng(4);
  std::vector<int32_t> tokens(B * T);
  for (auto& t : tokens) t = static_cast<int32_t>(rng.below(c.vocab));
  m.forward(tokens.data(), B, T);
  const std::vector<int64_t> rows = {3, T - 1, T + 17, 2 * T - 1};
  int calls = 0;
  double worst = 0;
  m.forward_rows(tokens.data(), B, T, 1, rows, [&](const SublayerTrace<float>& t) {
    EXPECT_EQ(t.index, calls);
    ++calls;
    EXPECT_EQ(t.is_attention, m.sublayer_params()[t.index].is_attention);
    EXPECT_EQ(t.batch, B);
    EXPECT_EQ(t.len, T);
    ASSERT_TRUE(t.rows == B * T || t.rows == static_cast<int64_t>(rows.size()));
    for (int64_t k = 0; k < t.rows; ++k) {
      const int64_t n = t.row_ids[k];
      if (t.rows == B * T) {
        EXPECT_EQ(n, k);
      }
      worst = std::max(worst, row_error(t.input + k * D, m.stream(t.index) + n * D, D));
      // Under AttnRes the sublayer leaves its record (a source of later mixtures).
      const float* out = m.scheme().residual_mode == ResidualMode::additive
                             ? m.stream(t.index + 1)
                             : m.res_source(t.index + 1);
      worst = std::max(worst, row_error(t.output + k * D, out + n * D, D));
      worst = std::max(worst, row_error(t.branch + k * D, m.branch_output(t.index) + n * D, D));
      worst = std::max(
          worst, row_error(t.branch_normed + k * D, m.branch_output_normed(t.index) + n * D, D));
      if (t.is_attention) {
        worst = std::max(worst, row_error(t.heads + k * D, m.attention_heads(t.index) + n * D, D));
      } else {
        EXPECT_EQ(t.heads, nullptr);
        EXPECT_EQ(t.qkv, nullptr);
      }
    }
  });
  EXPECT_EQ(calls, m.num_sublayers());
  EXPECT_LT(worst, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, ForwardRowsTrace,
    ::testing::Values(Case{Scheme::pre, PosEncoding::none, true, 1},
                      Case{Scheme::post, PosEncoding::rope, true, 2},
                      Case{Scheme::peri_init, PosEncoding::sinusoidal, false, 2},
                      Case{Scheme::post_attn, PosEncoding::learned, true, 2},
                      Case{Scheme::ngpt, PosEncoding::none, false, 2},
                      Case{Scheme::deepnorm, PosEncoding::none, true, 3},
                      Case{Scheme::attnres, PosEncoding::rope, true, 2},
                      Case{Scheme::block_attnres, PosEncoding::none, true, 3}));

}  // namespace
}  // namespace normlab
