// Forward hooks (include/normlab/model/activation_hooks.hpp): the training forward offers its
// activations by name, an identity hook leaves every logit bit for bit, a changed activation is
// what the rest of the forward reads, and the inference pass refuses to run while hooks are set.
// Python's tests (python/tests/test_hooks.py) check every scheme's names and interventions
// against the PyTorch twin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "normlab/model/activation_hooks.hpp"
#include "normlab/model/model.hpp"

namespace normlab {
namespace {

// Hooks at every name: each visit is recorded with its shape, and `change`, if set, may change
// the values of the names it returns true for.
struct Recorder : ActivationHooks<double> {
  std::vector<std::string> names;
  std::map<std::string, std::vector<int64_t>> shapes;
  std::function<bool(const std::string&, double*, int64_t)> change;

  bool wants(const std::string&) override { return true; }
  bool visit(const std::string& name, double* values, const std::vector<int64_t>& shape) override {
    names.push_back(name);
    shapes[name] = shape;
    int64_t count = 1;
    for (int64_t s : shape) count *= s;
    return change && change(name, values, count);
  }
};

ModelConfig attention_only(Scheme scheme) {
  ModelConfig c;
  c.vocab = 7;
  c.width = 8;
  c.heads = 2;
  c.layers = 1;
  c.mlp = false;
  c.scheme = scheme;
  c.init_std = 0.3;
  return c;
}

const std::vector<int32_t> kTokens = {1, 4, 2, 6, 0, 3};  // B = 2, T = 3

std::vector<double> logits_of(Model<double>& m) {
  const double* l = m.forward(kTokens.data(), 2, 3);
  return std::vector<double>(l, l + 6 * m.config().vocab);
}

TEST(ForwardHooks, PreNormOffersTransformerLensNamesInOrder) {
  Model<double> m(attention_only(Scheme::pre));
  m.init(3);
  Recorder r;
  m.set_forward_hooks(&r);
  m.forward(kTokens.data(), 2, 3);
  const std::vector<std::string> expected = {"hook_embed",
                                             "blocks.0.hook_resid_pre",
                                             "blocks.0.ln1.hook_scale",
                                             "blocks.0.ln1.hook_normalized",
                                             "blocks.0.attn.hook_in",
                                             "blocks.0.attn.hook_q",
                                             "blocks.0.attn.hook_k",
                                             "blocks.0.attn.hook_v",
                                             "blocks.0.attn.hook_attn_scores",
                                             "blocks.0.attn.hook_pattern",
                                             "blocks.0.attn.hook_z",
                                             "blocks.0.hook_attn_out",
                                             "blocks.0.hook_attn_out_normed",
                                             "blocks.0.hook_resid_post",
                                             "ln_final.hook_scale",
                                             "ln_final.hook_normalized"};
  EXPECT_EQ(r.names, expected);
  EXPECT_EQ(r.shapes["blocks.0.ln1.hook_scale"], (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(r.shapes["blocks.0.attn.hook_q"], (std::vector<int64_t>{2, 3, 2, 4}));
  EXPECT_EQ(r.shapes["blocks.0.attn.hook_pattern"], (std::vector<int64_t>{2, 2, 3, 3}));
}

TEST(ForwardHooks, IdentityHooksLeaveTheLogitsBitForBit) {
  for (Scheme s : {Scheme::pre, Scheme::post, Scheme::peri, Scheme::attnres}) {
    Model<double> m(attention_only(s));
    m.init(5);
    const std::vector<double> plain = logits_of(m);
    Recorder r;
    m.set_forward_hooks(&r);
    const std::vector<double> hooked = logits_of(m);
    EXPECT_EQ(std::memcmp(plain.data(), hooked.data(), plain.size() * sizeof(double)), 0)
        << to_string(s);
  }
}

// With the attention output zeroed, a pre-norm model without a final norm computes
// logits = E[token] U^T: the unembedding of the embedding alone.
TEST(ForwardHooks, ZeroedAttentionOutputLeavesTheEmbeddingPath) {
  ModelConfig c = attention_only(Scheme::pre);
  c.final_norm = Toggle::off;
  Model<double> m(c);
  m.init(7);
  Recorder r;
  r.change = [](const std::string& name, double* values, int64_t count) {
    if (name != "blocks.0.hook_attn_out") return false;
    std::fill(values, values + count, 0.0);
    return true;
  };
  m.set_forward_hooks(&r);
  const std::vector<double> logits = logits_of(m);
  const ParamLayout& layout = m.layout();
  const double* E = m.params().data() + layout.find("embed.weight")->offset;
  const double* U = m.params().data() + layout.find("unembed.weight")->offset;
  const int V = c.vocab, D = c.width;
  for (int n = 0; n < 6; ++n) {
    for (int v = 0; v < V; ++v) {
      double expected = 0;
      for (int d = 0; d < D; ++d) expected += E[kTokens[n] * D + d] * U[v * D + d];
      EXPECT_NEAR(logits[n * V + v], expected, 1e-12);
    }
  }
}

TEST(ForwardHooks, InferencePassRefusesToRunWithHooks) {
  Model<double> m(attention_only(Scheme::pre));
  m.init(1);
  Recorder r;
  m.set_forward_hooks(&r);
  const std::vector<int64_t> rows = {0};
  EXPECT_THROW(m.forward_rows(kTokens.data(), 2, 3, 1, rows), std::logic_error);
  m.set_forward_hooks(nullptr);
  EXPECT_NO_THROW(m.forward_rows(kTokens.data(), 2, 3, 1, rows));
}

}  // namespace
}  // namespace normlab
