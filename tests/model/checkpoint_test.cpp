// The checkpoint library API (checkpoint.hpp):
//   - save then load gives the same config and bit-identical parameters, for several schemes,
//     QK-norm and hybridnorm;
//   - saving the same model twice gives the same bytes;
//   - load_checkpoint(dir, &expected) accepts the stored config and rejects any other one with an
//     InputError naming the file and the first differing field;
//   - a missing directory is an InputError naming it.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "normlab/base/errors.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "support/cli.hpp"
#include "support/input_error.hpp"

namespace normlab {
namespace {

using testing::input_error;
using testing::TempDir;

ModelConfig checkpoint_config(Scheme scheme, NormKind norm) {
  ModelConfig c;
  c.vocab = 10;
  c.width = 8;
  c.heads = 2;
  c.layers = 2;
  c.mlp_mult = 2;
  c.scheme = scheme;
  c.norm = norm;
  return c;
}

TEST(Checkpoint, RoundTripIsBitIdentical) {
  TempDir dir;
  for (auto [scheme, norm] :
       {std::pair{Scheme::pre, NormKind::layernorm}, std::pair{Scheme::ngpt, NormKind::l2},
        std::pair{Scheme::deepnorm, NormKind::rmsnorm}, std::pair{Scheme::peri, NormKind::derf},
        std::pair{Scheme::post, NormKind::scalenorm},
        std::pair{Scheme::sqrt_scaling, NormKind::dyt}}) {
    ModelConfig c = checkpoint_config(scheme, norm);
    c.pos = PosEncoding::learned;
    c.max_len = 16;
    c.tied = scheme == Scheme::ngpt;
    Model<float> m(c);
    m.init(3);
    const std::filesystem::path d = dir / to_string(scheme);
    save_checkpoint(d, m);
    const auto loaded = load_checkpoint(d);
    EXPECT_EQ(to_json(loaded->config()), to_json(c)) << to_string(scheme);
    ASSERT_EQ(loaded->params().size(), m.params().size());
    EXPECT_EQ(
        std::memcmp(loaded->params().data(), m.params().data(), m.params().size() * sizeof(float)),
        0)
        << to_string(scheme);
  }
}

// QK-norm and hybridnorm: the field and the tensors it adds survive a save and a load.
TEST(Checkpoint, RoundTripKeepsQkNormAndHybridNorm) {
  TempDir dir;
  for (const auto& [scheme, qk] :
       {std::pair{Scheme::pre, QkNorm::l2}, std::pair{Scheme::block_attnres, QkNorm::rmsnorm},
        std::pair{Scheme::hybridnorm, QkNorm::none}}) {
    ModelConfig c = checkpoint_config(scheme, NormKind::rmsnorm);
    c.qk_norm = qk;
    Model<float> m(c);
    m.init(3);
    for (float& p : m.params()) p += 0.25f;  // off the inits: s_h = 10, gains 1
    const std::filesystem::path d = dir / to_string(scheme);
    save_checkpoint(d, m);
    const auto loaded = load_checkpoint(d);
    EXPECT_EQ(loaded->config().qk_norm, qk);
    EXPECT_EQ(to_json(loaded->config()), to_json(c)) << to_string(scheme);
    EXPECT_TRUE(loaded->scheme().head_norms.any());
    ASSERT_EQ(loaded->params().size(), m.params().size());
    EXPECT_EQ(
        std::memcmp(loaded->params().data(), m.params().data(), m.params().size() * sizeof(float)),
        0)
        << to_string(scheme);
  }
}

TEST(Checkpoint, SavingTwiceGivesTheSameBytes) {
  TempDir dir;
  Model<float> m(checkpoint_config(Scheme::peri, NormKind::rmsnorm));
  m.init(8);
  save_checkpoint(dir / "a", m);
  save_checkpoint(dir / "b", m);
  const std::string a = testing::slurp(dir / "a" / kModelFile);
  EXPECT_GT(a.size(), m.params().size() * sizeof(float));
  EXPECT_EQ(a, testing::slurp(dir / "b" / kModelFile));
  // No temporary file is left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "a")) {
    ++files;
    EXPECT_EQ(entry.path().filename(), kModelFile);
  }
  EXPECT_EQ(files, 1);
}

TEST(Checkpoint, ExpectedConfigMustMatch) {
  TempDir dir;
  const ModelConfig c = checkpoint_config(Scheme::pre, NormKind::rmsnorm);
  Model<float> m(c);
  m.init(1);
  save_checkpoint(dir.path(), m);
  EXPECT_NO_THROW(load_checkpoint(dir.path(), &c));

  ModelConfig wider = c;
  wider.width = 16;
  const std::string file = (dir / kModelFile).string();
  std::string msg = input_error([&] { load_checkpoint(dir.path(), &wider); });
  EXPECT_NE(msg.find(file), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not match"), std::string::npos) << msg;
  EXPECT_NE(msg.find("width is 8 in the file but 16 was expected"), std::string::npos) << msg;

  // A field that does not change any shape is still a mismatch.
  ModelConfig other_scheme = c;
  other_scheme.scheme = Scheme::sqrt_scaling;
  msg = input_error([&] { load_checkpoint(dir.path(), &other_scheme); });
  EXPECT_NE(msg.find("scheme is \"pre\" in the file but \"sqrt_scaling\" was expected"),
            std::string::npos)
      << msg;

  ModelConfig other_beta = c;
  other_beta.beta = 2.0;
  msg = input_error([&] { load_checkpoint(dir.path(), &other_beta); });
  EXPECT_NE(msg.find("beta"), std::string::npos) << msg;
}

TEST(Checkpoint, MissingDirectory) {
  TempDir dir;
  const std::filesystem::path d = dir / "nothing_here";
  const std::string msg = input_error([&] { load_checkpoint(d); });
  EXPECT_NE(msg.find(d.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("no such directory"), std::string::npos) << msg;
}

TEST(Checkpoint, ExtraMetadataIsKept) {
  TempDir dir;
  const ModelConfig c = checkpoint_config(Scheme::post, NormKind::layernorm);
  Model<float> m(c);
  m.init(2);
  save_param_file(dir / "p.safetensors", c, m.layout(), m.params(), {{"step", "42"}});
  const LoadedParams p = load_param_file(dir / "p.safetensors", &c);
  EXPECT_EQ(p.metadata.at("step"), "42");
  EXPECT_EQ(p.values, m.params());
}

}  // namespace
}  // namespace normlab
