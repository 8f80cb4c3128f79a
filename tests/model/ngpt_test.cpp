// The ngpt row against the reference's semantics (NVIDIA/ngpt; docs/schemes.md, "ngpt"):
//   - the scales it adds (s_qk, s_uv, logit_scale = s_z, alpha): names, shapes, no decay, the
//     stored inits and the values in use at init (alpha 0.05, s_qk 1, s_uv sqrt(D), s_z 1);
//   - q and k of each head leave the attention's normalization with norm s_qk, scaled after
//     RoPE (q / s_qk has unit length per head even with s_qk varying within the head);
//   - the softmax scale beta · sqrt(dh);
//   - alpha enters as |alpha|: a negative stored alpha gives the forward of its positive;
//   - scheme_revision: written for ngpt only, an ngpt config or checkpoint without it refused
//     with the message that says why, and no other row's JSON changed.
// The gradients (model_gradcheck_test), the inference path (forward_rows_test) and the twin
// (twin_test) are checked where every other scheme is.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "normlab/base/errors.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/model/scheme_table.hpp"
#include "support/cli.hpp"
#include "support/param_tensors.hpp"
#include "support/safetensors_builder.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

ModelConfig ngpt_config() {
  ModelConfig c = testing::small_model_config(Scheme::ngpt);  // D = 8, 2 heads, M = 16
  c.norm = NormKind::l2;
  return c;
}

TEST(Ngpt, ScalesStartAtTheReferenceValues) {
  const ModelConfig c = ngpt_config();
  Model<double> m(c);
  m.init(1);
  const double D = c.width, base = 1 / std::sqrt(D);
  const NgptScales s = ngpt_scales(c);
  struct Expect {
    std::string name;
    int64_t size;
    double stored, factor, in_use;
  };
  const std::vector<Expect> expected = {{"layers.0.attn.alpha", 8, base, s.alpha.factor, 0.05},
                                        {"layers.1.mlp.alpha", 8, base, s.alpha.factor, 0.05},
                                        {"layers.0.attn.s_qk", 8, base, s.s_qk.factor, 1.0},
                                        {"layers.1.attn.s_qk", 8, base, s.s_qk.factor, 1.0},
                                        {"layers.0.mlp.s_uv", 16, 1.0, s.s_uv.factor, std::sqrt(D)},
                                        {"logit_scale", 9, base, s.s_z.factor, 1.0}};
  for (const Expect& e : expected) {
    const TensorSpec& t = testing::tensor_named(m, e.name);
    EXPECT_EQ(t.shape, std::vector<int64_t>{e.size}) << e.name;
    EXPECT_FALSE(t.decay) << e.name;
    for (int64_t i = t.offset; i < t.offset + t.size; ++i) {
      EXPECT_DOUBLE_EQ(m.params()[i], e.stored) << e.name;
      EXPECT_NEAR(std::abs(m.params()[i]) * e.factor, e.in_use, 1e-14) << e.name;
    }
  }
  // The factors: alpha 0.05/base, the others 1/base, s_uv sqrt(D) (stored 1).
  EXPECT_NEAR(s.alpha.factor, 0.05 * std::sqrt(D), 1e-15);
  EXPECT_NEAR(s.s_qk.factor, std::sqrt(D), 1e-15);
  EXPECT_NEAR(s.s_uv.factor, std::sqrt(D), 1e-15);
  EXPECT_NEAR(s.s_z.factor, std::sqrt(D), 1e-15);
  // l2 has no parameters: N(x) of the interpolation adds no tensor; no MLP, no s_uv.
  EXPECT_EQ(m.layout().find("layers.0.attn.x_norm.weight"), nullptr);
  ModelConfig no_mlp = c;
  no_mlp.mlp = false;
  Model<double> attention_only(no_mlp);
  EXPECT_EQ(attention_only.layout().find("layers.0.mlp.s_uv"), nullptr);
  EXPECT_NE(attention_only.layout().find("layers.0.attn.s_qk"), nullptr);
}

TEST(Ngpt, SoftmaxScaleIsBetaTimesSqrtHeadDim) {
  ModelConfig c = ngpt_config();  // dh = 4
  EXPECT_DOUBLE_EQ(attention_scale(c), 2.0);
  c.beta = 1.5;
  EXPECT_DOUBLE_EQ(attention_scale(c), 3.0);
}

// Each head's q and k as the attention sees them, divided by the s_qk in use, through
// forward_rows' observer: (rows, heads) lengths of q (part 0) or k (part 1).
std::vector<double> unit_lengths(Model<double>& m, int part) {
  const ModelConfig& c = m.config();
  const int D = c.width, dh = c.head_dim();
  const double f = ngpt_scales(c).s_qk.factor;
  const double* s = m.params().data() + testing::tensor_named(m, "layers.0.attn.s_qk").offset;
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<double> out;
  m.forward_rows(tokens.data(), 1, 8, 1, {7}, [&](const SublayerTrace<double>& t) {
    if (t.index != 0) return;
    for (int64_t n = 0; n < 8; ++n) {
      for (int h = 0; h < c.heads; ++h) {
        double ss = 0;
        for (int j = 0; j < dh; ++j) {
          const double x = t.qkv[n * 3 * D + part * D + h * dh + j] / (s[h * dh + j] * f);
          ss += x * x;
        }
        out.push_back(std::sqrt(ss));
      }
    }
  });
  return out;
}

TEST(Ngpt, QueriesAndKeysAreNormalizedPerHeadAfterRope) {
  ModelConfig c = ngpt_config();
  c.pos = PosEncoding::rope;
  Model<double> m(c);
  m.init(3);
  // At init s_qk is 1 in use: q and k have unit length per head (eps shortens them by
  // ~eps / (2 |q|^2)).
  for (int part : {0, 1}) {
    for (double n : unit_lengths(m, part)) EXPECT_NEAR(n, 1.0, 1e-3);
  }
  // s_qk varying within each head: q / s_qk still has unit length, which holds only when s_qk
  // multiplies after RoPE (RoPE mixes pairs of features with different scales).
  const TensorSpec& s = testing::tensor_named(m, "layers.0.attn.s_qk");
  Rng rng(7);
  const double base = 1 / std::sqrt(8.0);
  for (int64_t i = s.offset; i < s.offset + s.size; ++i) {
    m.params()[i] = base * (1.0 + 0.5 * rng.uniform());
  }
  for (int part : {0, 1}) {
    for (double n : unit_lengths(m, part)) EXPECT_NEAR(n, 1.0, 1e-3);
  }
  // s_qk constant per head (2 on head 0, 3 on head 1 in use): each head's length is it.
  for (int64_t i = 0; i < s.size; ++i) {
    m.params()[s.offset + i] = (i < 4 ? 2.0 : 3.0) * base;
  }
  const int D = c.width;
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 7, 8};
  m.forward_rows(tokens.data(), 1, 8, 1, {7}, [&](const SublayerTrace<double>& t) {
    if (t.index != 0) return;
    for (int64_t n = 0; n < 8; ++n) {
      for (int part : {0, 1}) {
        for (int h = 0; h < 2; ++h) {
          double ss = 0;
          for (int j = 0; j < 4; ++j) {
            const double x = t.qkv[n * 3 * D + part * D + h * 4 + j];
            ss += x * x;
          }
          EXPECT_NEAR(std::sqrt(ss), h == 0 ? 2.0 : 3.0, 3e-3) << n << " " << part << " " << h;
        }
      }
    }
  });
}

TEST(Ngpt, AlphaEntersAsItsAbsoluteValue) {
  const ModelConfig c = ngpt_config();
  Model<double> m(c);
  m.init(2);
  Rng rng(4);
  std::vector<const TensorSpec*> alphas = {&testing::tensor_named(m, "layers.0.attn.alpha"),
                                           &testing::tensor_named(m, "layers.1.mlp.alpha")};
  for (const TensorSpec* t : alphas) {
    for (int64_t i = t->offset; i < t->offset + t->size; ++i) {
      m.params()[i] = 0.1 + 0.2 * rng.uniform();
    }
  }
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6};
  const std::vector<double> positive(m.forward(tokens.data(), 1, 6),
                                     m.forward(tokens.data(), 1, 6) + 6 * c.vocab);
  for (const TensorSpec* t : alphas) {
    for (int64_t i = t->offset; i < t->offset + t->size; i += 2) m.params()[i] *= -1;
  }
  const double* negative = m.forward(tokens.data(), 1, 6);
  for (size_t k = 0; k < positive.size(); ++k) EXPECT_EQ(negative[k], positive[k]) << k;
  // And alpha matters: a larger one changes the logits.
  m.params()[alphas[0]->offset] *= 3;
  const double* larger = m.forward(tokens.data(), 1, 6);
  double diff = 0;
  for (size_t k = 0; k < positive.size(); ++k) diff += std::abs(larger[k] - positive[k]);
  EXPECT_GT(diff, 1e-6);
}

std::string json_error(const nlohmann::json& j) {
  try {
    model_config_from_json(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

constexpr char kRevisionMessage[] =
    "model config: this model was made with ngpt revision 1 (before q/k normalization, s_qk, "
    "s_uv, s_z); this normlab implements revision 2; retrain it";

TEST(Ngpt, ConfigsCarryTheRevisionAndRefuseAnotherOne) {
  const nlohmann::json j = to_json(ngpt_config());
  EXPECT_EQ(j.at("scheme_revision"), 2);
  EXPECT_EQ(model_config_from_json(j).scheme, Scheme::ngpt);
  nlohmann::json old = j;
  old.erase("scheme_revision");
  EXPECT_EQ(json_error(old), kRevisionMessage);
  old["scheme_revision"] = 3;
  EXPECT_EQ(json_error(old),
            "model config: this model was made with ngpt revision 3; this normlab implements "
            "revision 2; retrain it");
  old["scheme_revision"] = "2";
  EXPECT_NE(json_error(old).find("scheme_revision"), std::string::npos) << json_error(old);
  // No other row is revised: their configs (and the hashes of their results) have no key,
  // and a key they do not expect is refused.
  for (const SchemeRow& row : scheme_table()) {
    if (row.scheme == Scheme::ngpt) continue;
    ModelConfig c = testing::small_model_config(row.scheme);
    c.norm = default_norm_kind(row.scheme);
    EXPECT_EQ(row.revision, 1) << row.name;
    nlohmann::json other = to_json(c);
    EXPECT_FALSE(other.contains("scheme_revision")) << row.name;
    other["scheme_revision"] = 2;
    EXPECT_NE(json_error(other).find("implements revision 1"), std::string::npos) << row.name;
  }
  EXPECT_FALSE(to_json(ModelConfig{}).contains("scheme_revision"));
}

// A checkpoint written before revision 2: no scheme_revision, and none of s_qk and s_uv. The
// revision is what the refusal names, not the missing tensors.
TEST(Ngpt, OldCheckpointsAreRefusedForTheirRevision) {
  Model<float> m(ngpt_config());
  m.init(1);
  testing::RawFile f = testing::raw_from_model(m);
  for (const char* name :
       {"layers.0.attn.s_qk", "layers.1.attn.s_qk", "layers.0.mlp.s_uv", "layers.1.mlp.s_uv"}) {
    ASSERT_NE(f.find(name), nullptr) << name;
    f.erase(name);
  }
  nlohmann::json config = to_json(m.config());
  config.erase("scheme_revision");
  f.metadata["normlab_config"] = config.dump();
  testing::TempDir dir;
  testing::write_bytes(dir / kModelFile, testing::build(f));
  try {
    load_checkpoint(dir.path());
    ADD_FAILURE() << "loaded a revision-1 ngpt checkpoint";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(kRevisionMessage), std::string::npos) << e.what();
  }
  // The current revision's checkpoint loads.
  save_checkpoint(dir / "new", m);
  EXPECT_EQ(load_checkpoint(dir / "new")->config().scheme, Scheme::ngpt);
}

}  // namespace
}  // namespace normlab
