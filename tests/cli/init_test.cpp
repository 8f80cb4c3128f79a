// `normlab init` writes deterministic checkpoints: two runs with the same seed and options give
// byte-identical files, for several schemes; a different seed gives different bytes; the result
// loads and runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::RunResult;
using testing::TempDir;

std::string init_bytes(const TempDir& dir, const std::string& name,
                       const std::vector<std::string>& options) {
  std::vector<std::string> args = {"init", "--out", (dir / name).string()};
  args.insert(args.end(), options.begin(), options.end());
  const RunResult r = testing::run_normlab(args);
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("wrote"), std::string::npos) << r.describe();
  return testing::slurp(dir / name / kModelFile);
}

TEST(Init, SameSeedGivesIdenticalBytes) {
  TempDir dir;
  const std::vector<std::vector<std::string>> option_sets = {
      {"--seed", "7"},
      {"--seed", "7", "--scheme", "ngpt", "--pos", "rope", "--heads", "2"},
      {"--seed", "7", "--scheme", "deepnorm", "--norm", "layernorm", "--layers", "3"},
      {"--seed", "7", "--scheme", "mix", "--mix-layers", "1", "--pos", "learned", "--max-len", "16",
       "--tied"},
  };
  int i = 0;
  for (const auto& options : option_sets) {
    SCOPED_TRACE("option set " + std::to_string(i));
    const std::string a = init_bytes(dir, "a" + std::to_string(i), options);
    const std::string b = init_bytes(dir, "b" + std::to_string(i), options);
    EXPECT_GT(a.size(), 1000u);
    EXPECT_TRUE(a == b) << "two inits with the same seed differ";
    ++i;
  }
}

TEST(Init, DifferentSeedGivesDifferentBytes) {
  TempDir dir;
  const std::string a = init_bytes(dir, "a", {"--seed", "1"});
  const std::string b = init_bytes(dir, "b", {"--seed", "2"});
  ASSERT_EQ(a.size(), b.size());
  EXPECT_NE(a, b);
}

TEST(Init, WrittenCheckpointHasTheRequestedConfigAndRuns) {
  TempDir dir;
  init_bytes(dir, "c",
             {"--seed", "3", "--scheme", "peri", "--norm", "layernorm", "--width", "16", "--heads",
              "4", "--vocab", "11", "--bidirectional", "--activation", "relu"});
  const auto m = load_checkpoint(dir / "c");
  EXPECT_EQ(m->config().scheme, Scheme::peri);
  EXPECT_EQ(m->config().norm, NormKind::layernorm);
  EXPECT_EQ(m->config().width, 16);
  EXPECT_EQ(m->config().heads, 4);
  EXPECT_EQ(m->config().vocab, 11);
  EXPECT_FALSE(m->config().causal);
  EXPECT_EQ(m->config().activation, Activation::relu);
  // Identical to a model initialized in-process with the same config and seed.
  Model<float> same(m->config());
  same.init(3);
  EXPECT_EQ(same.params(), m->params());
  const RunResult r =
      testing::run_normlab({"forward", "--checkpoint", (dir / "c").string(), "--tokens", "0 10"});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.describe();
}

// The norm kinds with scalar parameters from the command line, as the model's norm and on a
// placement slot: the checkpoint has their tensors at their inits and the model runs.
TEST(Init, NormKindsWithScalarsFromTheCommandLine) {
  TempDir dir;
  init_bytes(dir, "d",
             {"--seed", "4", "--scheme", "pre", "--norm", "derf", "--attn-norms",
              "in+post:scalenorm", "--mlp-norms", "in:dyt", "--width", "16", "--vocab", "11"});
  const auto m = load_checkpoint(dir / "d");
  EXPECT_EQ(m->config().norm, NormKind::derf);
  EXPECT_EQ(to_string(m->config().attn_norms), "in+post:scalenorm");
  auto value = [&](const std::string& name) {
    const TensorSpec* t = m->layout().find(name);
    EXPECT_NE(t, nullptr) << name;
    return t == nullptr ? -1.0f : m->params()[t->offset];
  };
  EXPECT_EQ(value("layers.0.attn.norm_in.alpha"), 0.5f);  // derf, the model's norm
  EXPECT_EQ(value("layers.0.attn.norm_in.shift"), 0.0f);
  EXPECT_EQ(value("layers.0.attn.norm_post.scale"), 4.0f);  // scalenorm, sqrt(16)
  EXPECT_EQ(value("layers.1.mlp.norm_in.alpha"), 0.5f);     // dyt
  EXPECT_EQ(value("final_norm.shift"), 0.0f);
  const RunResult r =
      testing::run_normlab({"forward", "--checkpoint", (dir / "d").string(), "--tokens", "0 10"});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.describe();
}

// QK-norm and hybridnorm from the command line: the config keeps them and the tensors they
// add are there at their inits.
TEST(Init, QkNormAndHybridNormFromTheCommandLine) {
  TempDir dir;
  init_bytes(dir, "q", {"--seed", "5", "--qk-norm", "l2", "--width", "16", "--heads", "4"});
  const auto q = load_checkpoint(dir / "q");
  EXPECT_EQ(q->config().qk_norm, QkNorm::l2);
  const TensorSpec* s = q->layout().find("layers.1.attn.qk_scale");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->shape, std::vector<int64_t>{4});
  EXPECT_EQ(q->params()[s->offset], 10.0f);
  init_bytes(dir, "h", {"--seed", "5", "--scheme", "hybridnorm", "--norm", "layernorm"});
  const auto h = load_checkpoint(dir / "h");
  EXPECT_EQ(h->config().scheme, Scheme::hybridnorm);
  EXPECT_NE(h->layout().find("layers.0.attn.v_norm.bias"), nullptr);
  const RunResult r =
      testing::run_normlab({"forward", "--checkpoint", (dir / "h").string(), "--tokens", "0 10"});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.describe();
}

}  // namespace
}  // namespace normlab
