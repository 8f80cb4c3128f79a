// Attention dispersion statistics: one-hot attention gives max weight 1 and entropy 0, uniform
// attention gives 1/n and ln n (causal: ln(t + 1) at position t), and the streaming
// per-query statistics equal those of the probabilities the training forward stores.
#include "normlab/probes/attention_stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"
#include "support/rounding.hpp"

namespace normlab {
namespace {

TEST(AttentionStats, OneHotRow) {
  const float p[5] = {0, 0, 1, 0, 0};
  const AttentionRowStats r = attention_stats_from_probs(p, 5);
  EXPECT_EQ(r.max_weight, 1.0);
  EXPECT_EQ(r.entropy, 0.0);
  // Logits with one key far above the others: a one-hot softmax.
  const double s[4] = {0, 800, 0, -3};
  const AttentionRowStats l = attention_stats_from_logits(s, 4);
  EXPECT_EQ(l.max_weight, 1.0);
  EXPECT_EQ(l.entropy, 0.0);
}

TEST(AttentionStats, UniformRow) {
  for (int64_t n : {1, 2, 7, 1000, 1 << 14}) {
    std::vector<double> s(n, 0.37);
    const AttentionRowStats r = attention_stats_from_logits(s.data(), n);
    EXPECT_NEAR(r.max_weight, 1.0 / n, 1e-15) << n;
    EXPECT_NEAR(r.entropy, std::log(double(n)), 1e-10) << n;
    std::vector<float> p(n, 1.0f / n);
    EXPECT_NEAR(attention_stats_from_probs(p.data(), n).entropy, std::log(double(n)), 1e-4);
  }
}

TEST(AttentionStats, TwoKeysMatchClosedForm) {
  // p = (1/(1+e^-d), e^-d/(1+e^-d)) for logits (d, 0).
  const double d = 1.3, s[2] = {d, 0};
  const double p0 = 1 / (1 + std::exp(-d)), p1 = 1 - p0;
  const AttentionRowStats r = attention_stats_from_logits(s, 2);
  EXPECT_NEAR(r.max_weight, p0, 1e-15);
  EXPECT_NEAR(r.entropy, -p0 * std::log(p0) - p1 * std::log(p1), 1e-15);
}

// A hand-built qkv: q = 0 gives uniform attention, so a causal query at position t has
// entropy ln(t + 1) and max weight 1/(t + 1); a bidirectional one ln T and 1/T.
TEST(AttentionStats, ZeroQueriesAreUniformCausalAndBidirectional) {
  const int64_t B = 2, T = 37;
  const int D = 8, H = 2;
  Rng rng(1);
  std::vector<float> qkv(B * T * 3 * D);
  for (int64_t n = 0; n < B * T; ++n) {
    for (int c = D; c < 3 * D; ++c) qkv[n * 3 * D + c] = static_cast<float>(rng.normal());
  }
  std::vector<double> scratch;
  for (bool causal : {true, false}) {
    const AttentionGeometry g{T, D, H, causal, 0.5};
    for (int64_t n = 0; n < B * T; ++n) {
      for (int h = 0; h < H; ++h) {
        const AttentionRowStats r = attention_query_stats(g, qkv.data(), n, h, scratch);
        const int64_t keys = causal ? n % T + 1 : T;
        EXPECT_EQ(r.keys, keys);
        EXPECT_NEAR(r.entropy, std::log(double(keys)), 1e-12);
        EXPECT_NEAR(r.max_weight, 1.0 / keys, 1e-15);
      }
    }
  }
}

// One key whose k is aligned with the query and large: one-hot attention.
TEST(AttentionStats, AlignedKeyIsOneHot) {
  const int64_t T = 10;
  const int D = 4, H = 1;
  std::vector<float> qkv(T * 3 * D, 0.0f);
  const int64_t t = 9, hot = 4;
  qkv[t * 3 * D + 0] = 30.0f;        // q_t = 30 e_0
  qkv[hot * 3 * D + D + 0] = 30.0f;  // k_hot = 30 e_0: logit 900·scale, the others 0
  std::vector<double> scratch;
  const AttentionRowStats r =
      attention_query_stats({T, D, H, true, 1.0}, qkv.data(), t, 0, scratch);
  EXPECT_EQ(r.max_weight, 1.0);
  EXPECT_EQ(r.entropy, 0.0);
}

// Entropy and largest weight of n probabilities in double: the reference.
AttentionRowStats stats_in_double(const double* p, int64_t n) {
  AttentionRowStats r;
  r.keys = n;
  for (int64_t j = 0; j < n; ++j) {
    if (p[j] > 0) r.entropy -= p[j] * std::log(p[j]);
    r.max_weight = std::max(r.max_weight, p[j]);
  }
  return r;
}

// One statistic's largest error, streaming and from the stored float probabilities, against the
// double model's probabilities, and the reference's largest magnitude.
struct StatErrors {
  double streaming = 0, stored = 0, ref = 0;
  void add(double streaming_value, double stored_value, double ref_value) {
    streaming = std::max(streaming, std::abs(streaming_value - ref_value));
    stored = std::max(stored, std::abs(stored_value - ref_value));
    ref = std::max(ref, std::abs(ref_value));
  }
};

// The statistics of the model's own stored probabilities (training forward) equal the
// streaming ones computed from the same q and k, for a causal and a bidirectional model: the
// streaming statistics are as close to those of the model in double as the stored float
// probabilities' are, within the rounding bound of support/rounding.hpp.
TEST(AttentionStats, MatchModelProbabilities) {
  for (auto [causal, pos] : {std::pair{true, PosEncoding::rope},
                             {false, PosEncoding::rope},
                             {true, PosEncoding::alibi},
                             {false, PosEncoding::alibi},
                             {true, PosEncoding::relative},
                             {false, PosEncoding::relative}}) {
    ModelConfig c;
    c.vocab = 13;
    c.width = 16;
    c.heads = 4;
    c.layers = 2;
    c.causal = causal;
    c.pos = pos;
    c.init_std = 0.5;
    c.beta = 3.0;  // scale beta / sqrt(dh) = 1.5, not 1
    Model<float> m(c);
    m.init(7);
    Model<double> ref(c);  // the same parameters in double
    ref.params().assign(m.params().begin(), m.params().end());
    const int64_t B = 2, T = 45;  // T not a multiple of 16: the probability rows are padded
    Rng rng(3);
    std::vector<int32_t> tokens(B * T);
    for (auto& t : tokens) t = static_cast<int32_t>(rng.below(c.vocab));
    m.forward(tokens.data(), B, T);
    ref.forward(tokens.data(), B, T);
    // The training forward does not keep q|k|v for outside use; forward_rows hands it over.
    // Its pointers live during the call: q|k|v and the relative terms are copied.
    std::vector<float> qkv, rel_u, rel_v, rel_keys;
    AttentionGeometry g;
    const int layer1 = c.mlp ? 2 : 1;
    m.forward_rows(tokens.data(), B, T, 1, {B * T - 1}, [&](const SublayerTrace<float>& t) {
      if (t.index != layer1) return;
      qkv.assign(t.qkv, t.qkv + B * T * 3 * c.width);
      g = attention_geometry(c, t);
      if (g.relative) {
        rel_u.assign(t.rel_u, t.rel_u + c.width);
        rel_v.assign(t.rel_v, t.rel_v + c.width);
        rel_keys.assign(t.rel_keys, t.rel_keys + (2 * T - 1) * c.width);
        g.rel_u = rel_u.data();
        g.rel_v = rel_v.data();
        g.rel_keys = rel_keys.data();
      }
    });
    ASSERT_FALSE(qkv.empty());
    EXPECT_EQ(g.relative, pos == PosEncoding::relative);
    const float* probs = m.attention_probs(layer1);  // (B, H, T, Tp)
    const double* probs64 = ref.attention_probs(layer1);
    const int64_t Tp = (T + 15) / 16 * 16;
    std::vector<double> scratch;
    StatErrors entropy, max_weight;
    double spread = 0;
    for (int64_t b = 0; b < B; ++b) {
      for (int h = 0; h < c.heads; ++h) {
        for (int64_t t = 0; t < T; ++t) {
          const int64_t keys = causal ? t + 1 : T;
          const int64_t row = ((b * c.heads + h) * T + t) * Tp;
          const AttentionRowStats e = attention_stats_from_probs(probs + row, keys);
          const AttentionRowStats want = stats_in_double(probs64 + row, keys);
          const AttentionRowStats r = attention_query_stats(g, qkv.data(), b * T + t, h, scratch);
          EXPECT_EQ(r.keys, keys);
          entropy.add(r.entropy, e.entropy, want.entropy);
          max_weight.add(r.max_weight, e.max_weight, want.max_weight);
          spread = std::max(spread, std::log(double(keys)) - r.entropy);
        }
      }
    }
    const double K = testing::forward_roundings(c, T);
    const double entropy_bound = testing::rounding_bound(K, entropy.stored, entropy.ref);
    const double max_bound = testing::rounding_bound(K, max_weight.stored, max_weight.ref);
    EXPECT_LE(entropy.streaming, entropy_bound) << "causal " << causal << " pos " << to_string(pos);
    EXPECT_LE(max_weight.streaming, max_bound) << "causal " << causal << " pos " << to_string(pos);
    std::printf("causal %d, pos %s: err/bound entropy %.3f, max weight %.3f\n", causal,
                to_string(pos).c_str(), entropy.streaming / entropy_bound,
                max_weight.streaming / max_bound);
    EXPECT_GT(spread, 0.1) << "the test model's attention should not be uniform";
  }
}

}  // namespace
}  // namespace normlab
