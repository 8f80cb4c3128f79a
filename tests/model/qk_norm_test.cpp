// QK-norm (the model field qk_norm) and the hybridnorm row (docs/schemes.md):
//   - the tensors each adds, with names, shapes, inits, no decay, and their place in the layout;
//   - what the attention computes: after the l2 QK-norm each head of q has norm s_h and each
//     head of k norm 1 (up to eps), after the rmsnorm one each head has RMS 1;
//   - hybridnorm resolves to "attn: post" with q, k and v normed by the model's norm kind;
//   - the config: parsing, JSON only when set, labels, and every refusal with its words.
// The gradients (model_gradcheck_test), the inference path (forward_rows_test) and the twin
// (twin_test) are checked where every other scheme is.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "normlab/base/errors.hpp"
#include "normlab/model/model.hpp"
#include "support/param_tensors.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

ModelConfig small_config(Scheme scheme, QkNorm qk) {
  ModelConfig c = testing::small_model_config(scheme);
  c.qk_norm = qk;
  return c;
}

std::vector<std::string> names_of(const Model<float>& m) {
  std::vector<std::string> out;
  for (const TensorSpec& t : m.layout().tensors()) out.push_back(t.name);
  return out;
}

TEST(QkNorm, L2AddsOnlyTheScalePerHeadAfterTheOutputProjection) {
  Model<float> m(small_config(Scheme::pre, QkNorm::l2));
  m.init(1);
  testing::expect_constant_tensor(m, "layers.1.attn.qk_scale", 2, 10.0f);
  // l2 has no parameters: no q_norm or k_norm tensors.
  for (const std::string& name : names_of(m)) {
    EXPECT_EQ(name.find("q_norm"), std::string::npos) << name;
    EXPECT_EQ(name.find("k_norm"), std::string::npos) << name;
  }
  const TensorSpec* o = m.layout().find("layers.0.attn.o.weight");
  EXPECT_EQ(m.layout().find("layers.0.attn.qk_scale")->offset, o->offset + o->size);
  EXPECT_EQ(m.sublayer_params()[0].qk_scale, m.layout().find("layers.0.attn.qk_scale")->offset);
  EXPECT_EQ(m.sublayer_params()[1].qk_scale, -1);  // the MLP
}

TEST(QkNorm, RmsNormAddsOneGainOfHeadDimensionForQAndForK) {
  Model<float> m(small_config(Scheme::post, QkNorm::rmsnorm));
  m.init(1);
  testing::expect_constant_tensor(m, "layers.0.attn.q_norm.weight", 4, 1.0f);
  testing::expect_constant_tensor(m, "layers.0.attn.k_norm.weight", 4, 1.0f);
  EXPECT_EQ(m.layout().find("layers.0.attn.v_norm.weight"), nullptr);
  EXPECT_EQ(m.layout().find("layers.0.attn.qk_scale"), nullptr);
  // In the layout: o, q_norm, k_norm, then the sublayer's own slot norms.
  const std::vector<std::string> names = names_of(m);
  const std::vector<std::string> attention(names.begin() + 1, names.begin() + 8);
  EXPECT_EQ(attention,
            (std::vector<std::string>{"layers.0.attn.q.weight", "layers.0.attn.k.weight",
                                      "layers.0.attn.v.weight", "layers.0.attn.o.weight",
                                      "layers.0.attn.q_norm.weight", "layers.0.attn.k_norm.weight",
                                      "layers.0.attn.norm_post.weight"}));
}

TEST(QkNorm, HybridNormNormalizesQKAndVWithTheModelsKind) {
  ModelConfig c = small_config(Scheme::hybridnorm, QkNorm::none);
  c.norm = NormKind::layernorm;
  Model<float> m(c);
  m.init(1);
  for (const char* part : {"q", "k", "v"}) {
    testing::expect_constant_tensor(m, fmt::format("layers.1.attn.{}_norm.weight", part), 4, 1.0f);
    testing::expect_constant_tensor(m, fmt::format("layers.1.attn.{}_norm.bias", part), 4, 0.0f);
  }
  // HybridNorm: N after the attention's add, nothing on the MLP, a final norm.
  for (int i = 0; i < m.num_sublayers(); ++i) {
    const SublayerSlots& s = m.scheme().sublayers[i];
    EXPECT_EQ(s.norm_post, i % 2 == 0) << i;
    EXPECT_FALSE(s.norm_in || s.norm_out) << i;
  }
  EXPECT_TRUE(m.scheme().final_norm);
  EXPECT_EQ(m.layout().find("layers.0.attn.qk_scale"), nullptr);
  // scalenorm per head: its scale starts at sqrt(dh), unit RMS per head.
  c.norm = NormKind::scalenorm;
  Model<float> s(c);
  s.init(1);
  testing::expect_constant_tensor(s, "layers.0.attn.k_norm.scale", 1, 2.0f);
}

// Each head's q and k rows as the attention sees them (after the head norms and RoPE, which
// keeps norms), through forward_rows' observer.
std::vector<double> head_norms_of(ModelConfig c, int part, bool rms) {
  c.init_std = 0.3;  // rows far above eps, which shortens them by ~eps / (2 |x|^2)
  Model<float> m(c);
  m.init(5);
  const int64_t B = 1, T = 6;
  std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6};
  std::vector<double> out;
  m.forward_rows(tokens.data(), B, T, 1, {T - 1}, [&](const SublayerTrace<float>& t) {
    if (!t.is_attention || t.index != 0) return;
    const int D = c.width, dh = c.head_dim();
    for (int64_t n = 0; n < B * T; ++n) {
      for (int h = 0; h < c.heads; ++h) {
        double ss = 0;
        for (int k = 0; k < dh; ++k) {
          const double x = t.qkv[n * 3 * D + part * D + h * dh + k];
          ss += x * x;
        }
        out.push_back(rms ? std::sqrt(ss / dh) : std::sqrt(ss));
      }
    }
  });
  return out;
}

TEST(QkNorm, HeadsLeaveTheNormWithTheRightLength) {
  ModelConfig c = small_config(Scheme::pre, QkNorm::l2);
  c.pos = PosEncoding::rope;
  for (double n : head_norms_of(c, 0, false)) EXPECT_NEAR(n, 10.0, 1e-3);  // s_h at init
  for (double n : head_norms_of(c, 1, false)) EXPECT_NEAR(n, 1.0, 1e-4);
  c.qk_norm = QkNorm::rmsnorm;
  for (int part : {0, 1}) {
    for (double n : head_norms_of(c, part, true)) EXPECT_NEAR(n, 1.0, 1e-3);
  }
  EXPECT_DOUBLE_EQ(attention_scale(c), 1.0 / 2.0);  // beta / sqrt(dh), dh = 4
  c.qk_norm = QkNorm::l2;
  c.beta = 1.5;
  EXPECT_DOUBLE_EQ(attention_scale(c), 1.5);  // s_h is in q
}

using testing::validation_error;

TEST(QkNorm, RefusalsSayWhatIsAllowed) {
  try {
    parse_qk_norm("layernorm");
    ADD_FAILURE() << "accepted qk_norm layernorm";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown qk_norm kind 'layernorm'; allowed: none, l2, rmsnorm");
  }
  ModelConfig c = small_config(Scheme::hybridnorm, QkNorm::l2);
  EXPECT_EQ(validation_error(c),
            "qk_norm = l2 cannot change scheme hybridnorm: it normalizes q, k and v itself "
            "(with the model's norm); allowed with hybridnorm: qk_norm = none");
  c = small_config(Scheme::ngpt, QkNorm::rmsnorm);
  c.norm = NormKind::l2;
  EXPECT_EQ(validation_error(c),
            "qk_norm = rmsnorm cannot change scheme ngpt: it normalizes q and k itself (each "
            "head to the unit sphere after RoPE, times its learnable s_qk); allowed with ngpt: "
            "qk_norm = none");
  // Allowed everywhere else, AttnRes and the unnormalized baseline included.
  for (Scheme s : {Scheme::pre, Scheme::post, Scheme::block_attnres, Scheme::rezero}) {
    EXPECT_EQ(validation_error(small_config(s, QkNorm::l2)), "") << to_string(s);
  }
  c = small_config(Scheme::pre, QkNorm::rmsnorm);
  c.norm = NormKind::none;
  EXPECT_EQ(validation_error(c), "");
  // hybridnorm needs a norm for its q, k and v, like every scheme with norms.
  c = small_config(Scheme::hybridnorm, QkNorm::none);
  c.norm = NormKind::none;
  EXPECT_NE(validation_error(c).find("scheme hybridnorm needs a norm"), std::string::npos);
}

TEST(QkNorm, StoredInJsonOnlyWhenSetAndNamedInTheLabel) {
  ModelConfig c;
  EXPECT_FALSE(to_json(c).contains("qk_norm"));  // older configs and hashes stay as they were
  EXPECT_EQ(model_config_from_json(to_json(c)).qk_norm, QkNorm::none);
  c.qk_norm = QkNorm::rmsnorm;
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j["qk_norm"], "rmsnorm");
  EXPECT_EQ(model_config_from_json(j).qk_norm, QkNorm::rmsnorm);
  EXPECT_EQ(scheme_label(c), "pre[qk=rmsnorm]");
  c.scheme = Scheme::hybridnorm;
  c.qk_norm = QkNorm::none;
  EXPECT_EQ(scheme_label(c), "hybridnorm");
  nlohmann::json bad = j;
  bad["qk_norm"] = "cosine";
  try {
    model_config_from_json(bad);
    ADD_FAILURE() << "accepted qk_norm cosine";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("allowed: none, l2, rmsnorm"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace normlab
