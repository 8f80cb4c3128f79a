// Placement overrides (model_config.hpp NormPlacement, docs/schemes.md "Placement overrides"):
// parsing and printing, what they resolve to, the errors, and that a placement which spells out
// a named scheme gives the same model bit for bit (same tensors, logits and gradients).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "normlab/base/errors.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"
#include "support/model_outputs.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

TEST(NormPlacement, ParsesAndPrintsCanonically) {
  EXPECT_TRUE(parse_norm_placement("auto").automatic);
  const NormPlacement none = parse_norm_placement("none");
  EXPECT_FALSE(none.automatic);
  EXPECT_FALSE(none.in.present || none.out.present || none.post.present);
  const NormPlacement p = parse_norm_placement("post+in:layernorm");
  EXPECT_TRUE(p.in.present);
  EXPECT_FALSE(p.out.present);
  EXPECT_TRUE(p.post.present);
  ASSERT_TRUE(p.in.kind.has_value());
  EXPECT_EQ(*p.in.kind, NormKind::layernorm);
  EXPECT_FALSE(p.post.kind.has_value());
  EXPECT_EQ(to_string(p), "in:layernorm+post");
  for (const char* text : {"auto", "none", "in", "out:standardize", "in+out+post", "in:l2+post"}) {
    EXPECT_EQ(to_string(parse_norm_placement(text)), text);
  }
}

TEST(NormPlacement, RejectsMalformedTextNamingTheProblem) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "unknown slot ''"},        {"before", "unknown slot 'before'"},
      {"in+in", "given twice"},       {"out:batchnorm", "unknown norm 'batchnorm'"},
      {"out:none", "cannot be none"}, {"in+", "unknown slot ''"},
  };
  for (const auto& [text, expected] : bad) {
    try {
      parse_norm_placement(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST(NormPlacement, ResolvesSlotsAndKindsOfEveryLayer) {
  ModelConfig c = testing::small_model_config(Scheme::post, NormKind::layernorm);
  c.attn_norms = parse_norm_placement("out:standardize");
  const ResolvedScheme r = resolve_scheme(c);
  ASSERT_EQ(r.sublayers.size(), 4u);
  for (int l = 0; l < 2; ++l) {
    const SublayerSlots& attn = r.sublayers[2 * l];
    const SublayerSlots& mlp = r.sublayers[2 * l + 1];
    EXPECT_FALSE(attn.norm_in);
    EXPECT_TRUE(attn.norm_out);
    EXPECT_FALSE(attn.norm_post);
    EXPECT_EQ(attn.kind_out, NormKind::standardize);
    EXPECT_TRUE(mlp.norm_post);  // the MLP keeps post's row
    EXPECT_EQ(mlp.kind_post, NormKind::layernorm);
  }
  EXPECT_FALSE(r.final_norm);  // post's default, untouched by the override
  // The parameter layout follows the slot's kind: standardize has no gain or bias.
  Model<float> m(c);
  EXPECT_EQ(m.layout().find("layers.0.attn.norm_out.weight"), nullptr);
  EXPECT_NE(m.layout().find("layers.0.mlp.norm_post.bias"), nullptr);
}

TEST(NormPlacement, ValidationSaysWhatIsAllowed) {
  auto message = [](ModelConfig c) -> std::string {
    try {
      validate(c);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  ModelConfig none = testing::small_model_config(Scheme::pre, NormKind::none);
  none.attn_norms = parse_norm_placement("in");  // a norm of the model's kind, which is none
  EXPECT_NE(message(none).find("norm is none"), std::string::npos);
  ModelConfig ngpt = testing::small_model_config(Scheme::ngpt, NormKind::l2);
  ngpt.mlp_norms = parse_norm_placement("in");
  EXPECT_NE(message(ngpt).find("ngpt"), std::string::npos);
  ModelConfig attnres = testing::small_model_config(Scheme::attnres, NormKind::rmsnorm);
  attnres.attn_norms = parse_norm_placement("in+post");
  EXPECT_NE(message(attnres).find("no 'post' slot"), std::string::npos);
  ModelConfig no_mlp = testing::small_model_config(Scheme::pre, NormKind::rmsnorm);
  no_mlp.mlp = false;
  no_mlp.mlp_norms = parse_norm_placement("post");
  EXPECT_NE(message(no_mlp).find("needs an MLP"), std::string::npos);
}

TEST(NormPlacement, SchemeLabelNamesTheOverride) {
  ModelConfig c = testing::small_model_config(Scheme::post, NormKind::layernorm);
  EXPECT_EQ(scheme_label(c), "post");
  c.attn_norms = parse_norm_placement("out:standardize");
  EXPECT_EQ(scheme_label(c), "post[attn=out:standardize]");
  c.mlp_norms = parse_norm_placement("none");
  EXPECT_EQ(scheme_label(c), "post[attn=out:standardize][mlp=none]");
}

TEST(NormPlacement, StoredInJsonAndOldConfigsMeanAuto) {
  ModelConfig c = testing::small_model_config(Scheme::post, NormKind::layernorm);
  c.attn_norms = parse_norm_placement("out");
  nlohmann::json j = to_json(c);
  EXPECT_EQ(j["attn_norms"], "out");
  EXPECT_EQ(j["mlp_norms"], "auto");
  EXPECT_EQ(to_string(model_config_from_json(j).attn_norms), "out");
  j.erase("attn_norms");
  j.erase("mlp_norms");
  EXPECT_TRUE(model_config_from_json(j).attn_norms.automatic);
}

using testing::run_once;

struct SpelledOut {
  const char* name;
  Scheme named;
  Scheme base;
  const char* attn;
  const char* mlp;
  Toggle final_norm;
};

class PlacementSpellsOutScheme : public ::testing::TestWithParam<SpelledOut> {};

TEST_P(PlacementSpellsOutScheme, IsBitIdenticalToTheNamedScheme) {
  const SpelledOut& s = GetParam();
  const ModelConfig named = testing::small_model_config(s.named, NormKind::layernorm);
  ModelConfig custom = testing::small_model_config(s.base, NormKind::layernorm);
  custom.attn_norms = parse_norm_placement(s.attn);
  custom.mlp_norms = parse_norm_placement(s.mlp);
  custom.final_norm = s.final_norm;
  const testing::ModelOutputs a = run_once(named), b = run_once(custom);
  EXPECT_EQ(a.names, b.names);
  EXPECT_EQ(a.logits, b.logits);  // exact: the same kernels in the same order
  EXPECT_EQ(a.grads, b.grads);
}

INSTANTIATE_TEST_SUITE_P(
    Named, PlacementSpellsOutScheme,
    ::testing::Values(
        SpelledOut{"post", Scheme::post, Scheme::pre, "post", "post", Toggle::off},
        SpelledOut{"peri", Scheme::peri, Scheme::pre, "in+out", "in+out", Toggle::automatic},
        SpelledOut{"post_attn", Scheme::post_attn, Scheme::pre, "out", "none", Toggle::automatic},
        SpelledOut{"pre", Scheme::pre, Scheme::post, "in", "in", Toggle::on}),
    [](const ::testing::TestParamInfo<SpelledOut>& info) { return info.param.name; });

}  // namespace
}  // namespace normlab
