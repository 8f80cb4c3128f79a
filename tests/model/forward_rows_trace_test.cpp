// The sublayer trace of forward_rows (what the probes read) holds, at the rows it names, the
// training forward's activations: stream in and out, per-head attention output, branch output
// before and after its norm, and q|k|v (AttnRes: the input is the sublayer's mixture, the
// output its record).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"
#include "support/rounding.hpp"

namespace normlab {
namespace {

struct TraceCase {
  Scheme scheme;
  PosEncoding pos;
  bool causal;
  int layers;
};

class ForwardRowsTrace : public ::testing::TestWithParam<TraceCase> {};

// One activation of one sublayer at the traced rows: the largest error of the trace and of the
// training forward (both float) against the training forward in double, and the reference's
// largest magnitude.
struct Errors {
  double trace = 0, train = 0, ref = 0;
  void add_row(const float* trace_row, const float* train_row, const double* ref_row, int D) {
    for (int d = 0; d < D; ++d) {
      trace = std::max(trace, std::abs(trace_row[d] - ref_row[d]));
      train = std::max(train, std::abs(train_row[d] - ref_row[d]));
      ref = std::max(ref, std::abs(ref_row[d]));
    }
  }
};

// The activations a trace holds: input, output, branch, branch after its norm, attention heads.
constexpr int kActivations = 5;
constexpr const char* kActivationNames[kActivations] = {"input", "output", "branch",
                                                        "branch_normed", "heads"};

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
  Model<double> ref(c);  // the same parameters in double: the reference activations
  ref.params().assign(m.params().begin(), m.params().end());
  const int64_t B = 2, T = 300, D = c.width;
  Rng rng(4);
  std::vector<int32_t> tokens(B * T);
  for (auto& t : tokens) t = static_cast<int32_t>(rng.below(c.vocab));
  m.forward(tokens.data(), B, T);
  ref.forward(tokens.data(), B, T);
  const std::vector<int64_t> rows = {3, T - 1, T + 17, 2 * T - 1};
  int calls = 0;
  std::vector<std::array<Errors, kActivations>> errors(m.num_sublayers());
  m.forward_rows(tokens.data(), B, T, 1, rows, [&](const SublayerTrace<float>& t) {
    EXPECT_EQ(t.index, calls);
    ++calls;
    EXPECT_EQ(t.is_attention, m.sublayer_params()[t.index].is_attention);
    EXPECT_EQ(t.batch, B);
    EXPECT_EQ(t.len, T);
    ASSERT_TRUE(t.rows == B * T || t.rows == static_cast<int64_t>(rows.size()));
    // Under AttnRes the sublayer leaves its record (a source of later mixtures).
    const bool additive = m.scheme().residual_mode == ResidualMode::additive;
    const int i = t.index;
    std::array<Errors, kActivations>& e = errors[i];
    for (int64_t k = 0; k < t.rows; ++k) {
      const int64_t n = t.row_ids[k];
      if (t.rows == B * T) {
        EXPECT_EQ(n, k);
      }
      const int64_t at = n * D;
      e[0].add_row(t.input + k * D, m.stream(i) + at, ref.stream(i) + at, D);
      e[1].add_row(t.output + k * D, (additive ? m.stream(i + 1) : m.res_source(i + 1)) + at,
                   (additive ? ref.stream(i + 1) : ref.res_source(i + 1)) + at, D);
      e[2].add_row(t.branch + k * D, m.branch_output(i) + at, ref.branch_output(i) + at, D);
      e[3].add_row(t.branch_normed + k * D, m.branch_output_normed(i) + at,
                   ref.branch_output_normed(i) + at, D);
      if (t.is_attention) {
        e[4].add_row(t.heads + k * D, m.attention_heads(i) + at, ref.attention_heads(i) + at, D);
      } else {
        EXPECT_EQ(t.heads, nullptr);
        EXPECT_EQ(t.qkv, nullptr);
      }
    }
  });
  EXPECT_EQ(calls, m.num_sublayers());
  // Each traced activation is as close to the double reference as the training forward's own
  // float result allows (support/rounding.hpp), K the roundings of the forward.
  const double K = testing::forward_roundings(c, T);
  double worst = 0;
  for (int i = 0; i < m.num_sublayers(); ++i) {
    for (int a = 0; a < kActivations; ++a) {
      const Errors& e = errors[i][a];
      const double bound = testing::rounding_bound(K, e.train, e.ref);
      EXPECT_LE(e.trace, bound) << "sublayer " << i << " " << kActivationNames[a];
      if (bound > 0) worst = std::max(worst, e.trace / bound);
    }
  }
  std::printf("worst err/bound %.3f\n", worst);
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, ForwardRowsTrace,
    ::testing::Values(TraceCase{Scheme::pre, PosEncoding::none, true, 1},
                      TraceCase{Scheme::post, PosEncoding::rope, true, 2},
                      TraceCase{Scheme::peri_init, PosEncoding::sinusoidal, false, 2},
                      TraceCase{Scheme::post_attn, PosEncoding::learned, true, 2},
                      TraceCase{Scheme::ngpt, PosEncoding::none, false, 2},
                      TraceCase{Scheme::deepnorm, PosEncoding::none, true, 3},
                      TraceCase{Scheme::attnres, PosEncoding::rope, true, 2},
                      TraceCase{Scheme::block_attnres, PosEncoding::none, true, 3}));

}  // namespace
}  // namespace normlab
