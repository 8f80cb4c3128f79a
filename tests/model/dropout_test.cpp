// Dropout in the model (ModelConfig::dropout, embed_dropout; core/kernels/dropout.hpp): where it
// acts, read through the forward hooks of a pre-norm model in double with p = 0.5 (so 1/(1 − p)
// = 2 is exact):
//   blocks.0.hook_resid_pre = hook_embed ⊙ m_0 · 2                 (site 0)
//   blocks.0.hook_resid_mid = hook_resid_pre + hook_attn_out_normed ⊙ m_1 · 2   (site 1)
// and that without a key (every pass but a training step) the model is the one without dropout,
// also for the attention probabilities' dropout (its mask: attention_dropout_test.cpp).
// The gradients with a fixed mask are checked by model_gradcheck_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/kernels/dropout.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/model/activation_hooks.hpp"
#include "normlab/model/model.hpp"

namespace normlab {
namespace {

// Keeps a copy of the activations it was created for.
class Capture : public ActivationHooks<double> {
 public:
  explicit Capture(const std::vector<std::string>& names) {
    for (const std::string& n : names) seen[n] = {};
  }
  bool wants(const std::string& name) override { return seen.count(name) > 0; }
  bool visit(const std::string& name, double* values, const std::vector<int64_t>& shape) override {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    seen[name].assign(values, values + n);
    return false;
  }
  std::map<std::string, std::vector<double>> seen;
};

ModelConfig dropout_config() {
  ModelConfig c;
  c.vocab = 11;
  c.width = 8;
  c.heads = 2;
  c.layers = 2;
  c.scheme = Scheme::pre;
  c.norm = NormKind::rmsnorm;
  c.init_std = 0.3;
  c.dropout = 0.5;
  c.embed_dropout = 0.5;
  return c;
}

std::vector<int32_t> tokens(int64_t n, int vocab) {
  Rng rng(4);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = static_cast<int32_t>(rng.below(vocab));
  return t;
}

TEST(ModelDropout, MasksTheEmbeddingAndEachSublayerOutput) {
  const ModelConfig c = dropout_config();
  Model<double> m(c);
  m.init(5);
  const int64_t B = 2, T = 6, N = B * T, D = c.width;
  const std::vector<int32_t> tok = tokens(N, c.vocab);
  Capture hooks({"hook_embed", "blocks.0.hook_resid_pre", "blocks.0.hook_attn_out_normed",
                 "blocks.0.hook_resid_mid"});
  m.set_forward_hooks(&hooks);
  const uint64_t key = dropout_step_key(9, 2);
  m.set_dropout_key(key);
  m.forward(tok.data(), B, T);
  const auto& embed = hooks.seen["hook_embed"];
  const auto& pre = hooks.seen["blocks.0.hook_resid_pre"];
  const auto& z = hooks.seen["blocks.0.hook_attn_out_normed"];
  const auto& mid = hooks.seen["blocks.0.hook_resid_mid"];
  ASSERT_EQ(embed.size(), size_t(N * D));
  ASSERT_EQ(mid.size(), size_t(N * D));
  int64_t dropped_embed = 0, dropped_z = 0;
  for (int64_t k = 0; k < N * D; ++k) {
    const bool keep0 = dropout_keeps(key, 0, k, 0.5), keep1 = dropout_keeps(key, 1, k, 0.5);
    dropped_embed += !keep0;
    dropped_z += !keep1;
    EXPECT_EQ(pre[k], keep0 ? embed[k] * 2 : 0.0) << k;
    EXPECT_DOUBLE_EQ(mid[k], pre[k] + (keep1 ? z[k] * 2 : 0.0)) << k;
  }
  // Both sites dropped something (96 elements each, p = 0.5).
  EXPECT_GT(dropped_embed, 0);
  EXPECT_GT(dropped_z, 0);
}

TEST(ModelDropout, WithoutAKeyTheModelIsTheOneWithoutDropout) {
  ModelConfig c = dropout_config();
  Model<double> with(c);
  with.init(5);
  c.dropout = 0;
  c.embed_dropout = 0;
  Model<double> without(c);
  without.params() = with.params();
  const int64_t B = 2, T = 6;
  const std::vector<int32_t> tok = tokens(B * T, c.vocab);
  const double* a = with.forward(tok.data(), B, T);
  const std::vector<double> logits(a, a + B * T * c.vocab);
  const double* b = without.forward(tok.data(), B, T);
  for (int64_t k = 0; k < B * T * c.vocab; ++k) ASSERT_EQ(logits[k], b[k]) << k;
  // With a key the logits change.
  with.set_dropout_key(dropout_step_key(1, 0));
  const double* d = with.forward(tok.data(), B, T);
  double diff = 0;
  for (int64_t k = 0; k < B * T * c.vocab; ++k) diff += std::abs(d[k] - logits[k]);
  EXPECT_GT(diff, 1e-3);
}

// The attention probabilities' dropout acts in a training step and only there: alone in the
// config, it changes the logits with a key and leaves them without one.
TEST(ModelDropout, AttentionDropoutActsWithAKeyOnly) {
  ModelConfig c = dropout_config();
  c.dropout = 0;
  c.embed_dropout = 0;
  c.attn_dropout = 0.5;
  Model<double> m(c);
  m.init(5);
  ModelConfig plain = c;
  plain.attn_dropout = 0;
  Model<double> without(plain);
  without.params() = m.params();
  const int64_t B = 2, T = 6, V = c.vocab;
  const std::vector<int32_t> tok = tokens(B * T, V);
  const double* a = without.forward(tok.data(), B, T);
  const std::vector<double> logits(a, a + B * T * V);
  const double* b = m.forward(tok.data(), B, T);
  for (int64_t k = 0; k < B * T * V; ++k) ASSERT_EQ(logits[k], b[k]) << k;
  m.set_dropout_key(dropout_step_key(1, 0));
  const double* d = m.forward(tok.data(), B, T);
  double diff = 0;
  for (int64_t k = 0; k < B * T * V; ++k) diff += std::abs(d[k] - logits[k]);
  EXPECT_GT(diff, 1e-3);
}

}  // namespace
}  // namespace normlab
