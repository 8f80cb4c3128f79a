// The parameters of the norm kinds with scalars (dyt, derf, scalenorm) in the model's layout:
// each norm's "<prefix>.alpha", ".shift", ".scale" are tensors of shape (1), consecutive in the
// buffer in the kernels' order, initialized to α = 0.5, s = 0 and c = sqrt(D), without weight
// decay (like the gains and biases); dyt and derf also carry a gain and a bias of size D;
// a placement slot with its own kind gets that kind's tensors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "normlab/model/model.hpp"
#include "support/param_tensors.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

TEST(NormScalars, DytHasAlphaGainAndBias) {
  Model<float> m(testing::small_model_config(Scheme::pre, NormKind::dyt));
  m.init(1);
  testing::expect_constant_tensor(m, "layers.0.attn.norm_in.weight", 8, 1.0f);
  testing::expect_constant_tensor(m, "layers.0.attn.norm_in.bias", 8, 0.0f);
  testing::expect_constant_tensor(m, "layers.0.attn.norm_in.alpha", 1, 0.5f);
  testing::expect_constant_tensor(m, "final_norm.alpha", 1, 0.5f);
  EXPECT_EQ(m.layout().find("layers.0.attn.norm_in.shift"), nullptr);
  EXPECT_EQ(m.sublayer_params()[0].norm_in.scalars,
            m.layout().find("layers.0.attn.norm_in.alpha")->offset);
}

TEST(NormScalars, DerfHasAlphaThenShift) {
  Model<float> m(testing::small_model_config(Scheme::post, NormKind::derf));
  m.init(1);
  testing::expect_constant_tensor(m, "layers.1.mlp.norm_post.weight", 8, 1.0f);
  testing::expect_constant_tensor(m, "layers.1.mlp.norm_post.bias", 8, 0.0f);
  testing::expect_constant_tensor(m, "layers.1.mlp.norm_post.alpha", 1, 0.5f);
  testing::expect_constant_tensor(m, "layers.1.mlp.norm_post.shift", 1, 0.0f);
  // The kernel reads s right after α.
  const int64_t alpha = m.layout().find("layers.1.mlp.norm_post.alpha")->offset;
  EXPECT_EQ(m.layout().find("layers.1.mlp.norm_post.shift")->offset, alpha + 1);
  EXPECT_EQ(m.sublayer_params()[3].norm_post.scalars, alpha);
}

TEST(NormScalars, ScaleNormHasOnlyItsScaleAtSqrtD) {
  Model<float> m(testing::small_model_config(Scheme::peri, NormKind::scalenorm));
  m.init(1);
  testing::expect_constant_tensor(m, "layers.0.attn.norm_out.scale", 1,
                                  static_cast<float>(std::sqrt(8.0)));
  EXPECT_EQ(m.layout().find("layers.0.attn.norm_out.weight"), nullptr);
  EXPECT_EQ(m.layout().find("layers.0.attn.norm_out.bias"), nullptr);
}

TEST(NormScalars, PlacementSlotsGetTheirKindsParameters) {
  ModelConfig c = testing::small_model_config(Scheme::post, NormKind::layernorm);
  c.attn_norms = parse_norm_placement("out:dyt");
  c.mlp_norms = parse_norm_placement("in:scalenorm+post:derf");
  Model<float> m(c);
  m.init(1);
  testing::expect_constant_tensor(m, "layers.1.attn.norm_out.alpha", 1, 0.5f);
  testing::expect_constant_tensor(m, "layers.1.mlp.norm_in.scale", 1,
                                  static_cast<float>(std::sqrt(8.0)));
  testing::expect_constant_tensor(m, "layers.1.mlp.norm_post.shift", 1, 0.0f);
  // The model's own norm elsewhere: post has no final norm, so none of layernorm's here
  // carries a scalar.
  for (const TensorSpec& t : m.layout().tensors()) {
    if (t.shape == std::vector<int64_t>{1}) {
      EXPECT_TRUE(t.name.find(".norm_out.") != std::string::npos ||
                  t.name.find(".mlp.norm_") != std::string::npos)
          << t.name;
    }
  }
}

// The kinds without scalars lay out exactly as before: no tensor of shape (1) anywhere.
TEST(NormScalars, OtherKindsHaveNone) {
  for (NormKind k : {NormKind::layernorm, NormKind::rmsnorm, NormKind::standardize, NormKind::l2}) {
    Model<float> m(testing::small_model_config(Scheme::peri_init, k));
    for (const TensorSpec& t : m.layout().tensors()) {
      EXPECT_NE(t.shape, std::vector<int64_t>{1}) << to_string(k) << ": " << t.name;
    }
    for (const SublayerParams& p : m.sublayer_params()) {
      EXPECT_EQ(p.norm_in.scalars, -1);
      EXPECT_EQ(p.norm_out.scalars, -1);
    }
  }
}

}  // namespace
}  // namespace normlab
