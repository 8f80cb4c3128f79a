// The scheme table (scheme_table.hpp) and the placement language (placement.hpp): every row is
// complete and its preset is valid text; the language parses, prints and refuses what it
// should; and a `custom` scheme whose placement spells out a row's preset is the named scheme
// bit for bit (tensors, logits, gradients).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "normlab/base/errors.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"
#include "normlab/model/scheme_table.hpp"
#include "support/model_outputs.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

TEST(SchemeTable, EveryRowIsCompleteAndNamedOnce) {
  std::set<std::string> names;
  int index = 0;
  for (const SchemeRow& row : scheme_table()) {
    EXPECT_EQ(static_cast<int>(row.scheme), index++) << row.name << " is out of enum order";
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " is named twice";
    EXPECT_EQ(parse_scheme(row.name), row.scheme);
    EXPECT_EQ(to_string(row.scheme), row.name);
    EXPECT_NE(std::string(row.block), "");
    ModelConfig c;
    c.scheme = row.scheme;
    c.layers = 3;
    c.mix_layers = 2;
    // The preset is valid placement text that prints back to itself.
    const std::string preset = row.placement(c);
    EXPECT_EQ(to_string(parse_placement(preset)), preset) << row.name;
  }
  EXPECT_EQ(index, static_cast<int>(Scheme::custom) + 1);
}

TEST(SchemeTable, RowsResolveToTheirBlocks) {
  auto resolved = [](Scheme scheme) {
    ModelConfig c;
    c.scheme = scheme;
    c.layers = 3;
    return resolve_scheme(c);
  };
  const ResolvedScheme lns = resolved(Scheme::layernorm_scaling);
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(lns.sublayers[i].norm_in);
    EXPECT_DOUBLE_EQ(lns.sublayers[i].input_scale, 1.0 / std::sqrt(i / 2 + 1.0));
    EXPECT_EQ(lns.sublayers[i].branch, ScaleSpec{});
  }
  const ResolvedScheme ls = resolved(Scheme::layerscale);
  EXPECT_EQ(ls.sublayers[3].branch, (ScaleSpec{ScaleKind::vector, 0.1}));
  const ResolvedScheme rz = resolved(Scheme::rezero);
  EXPECT_FALSE(rz.sublayers[0].norm_in || rz.sublayers[0].norm_out || rz.sublayers[0].norm_post);
  EXPECT_EQ(rz.sublayers[5].branch, (ScaleSpec{ScaleKind::scalar, 0.0}));
  EXPECT_FALSE(rz.final_norm);
  const ResolvedScheme pp = resolved(Scheme::pre_and_post);
  EXPECT_TRUE(pp.sublayers[2].norm_in && pp.sublayers[2].norm_post && !pp.sublayers[2].norm_out);
  EXPECT_FALSE(pp.final_norm);
  const ResolvedScheme re = resolved(Scheme::reordered);
  EXPECT_TRUE(re.sublayers[1].norm_out && !re.sublayers[1].norm_in);
  EXPECT_TRUE(re.final_norm);
  // A ReZero model's learnable factors start at 0: the model is the identity plus embeddings.
  ModelConfig c;
  c.scheme = Scheme::rezero;
  Model<float> m(c);
  ASSERT_NE(m.layout().find("layers.1.mlp.branch_scale"), nullptr);
  EXPECT_EQ(m.layout().find("layers.1.mlp.branch_scale")->size, 1);
}

TEST(PlacementText, ParsesAndPrintsCanonically) {
  const Placement p = parse_placement(
      " all: in,branch=vector(0.1) ; attn[0:2]: post:layernorm, residual=2.5; mlp[1:]: none, "
      "input=1/sqrt(l+1); final: off; embed: on");
  ASSERT_EQ(p.rules.size(), 5u);
  EXPECT_EQ(p.rules[0].target, PlacementRule::Target::all);
  EXPECT_EQ(p.rules[0].branch, (ScaleSpec{ScaleKind::vector, 0.1}));
  EXPECT_EQ(p.rules[1].target, PlacementRule::Target::attn);
  EXPECT_EQ(p.rules[1].first_layer, 0);
  EXPECT_EQ(p.rules[1].end_layer, 2);
  EXPECT_EQ(p.rules[1].residual, (ScaleSpec{ScaleKind::constant, 2.5}));
  EXPECT_EQ(p.rules[2].first_layer, 1);
  EXPECT_FALSE(p.rules[2].norms->in.present);
  EXPECT_EQ(p.rules[2].input, (ScaleSpec{ScaleKind::inverse_sqrt_layer, 1.0}));
  EXPECT_EQ(*p.rules[3].on, false);
  EXPECT_EQ(*p.rules[4].on, true);
  EXPECT_EQ(to_string(p),
            "all: in, branch=vector(0.1); attn[0:2]: post:layernorm, residual=2.5; mlp[1:]: "
            "none, input=1/sqrt(l+1); final: off; embed: on");
  EXPECT_TRUE(parse_placement("").empty());
  EXPECT_EQ(parse_placement("all: in; ;mlp: post;").rules.size(), 2u);  // empty rules skipped
  // Numbers print back exactly.
  EXPECT_EQ(parse_placement(to_string(parse_placement("all: residual=0.1234567890123456789")))
                .rules[0]
                .residual->value,
            0.1234567890123456789);
}

TEST(PlacementText, RejectsMalformedTextNamingTheProblem) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"in", "has no ':'"},
      {"every: in", "unknown target 'every'"},
      {"attn[2]: in", "[FIRST:END]"},
      {"attn[3:1]: in", "FIRST <= END"},
      {"attn[0:2: in", "ends with ']'"},
      {"all: before", "unknown slot 'before'"},
      {"all: in, in", "two norm settings"},
      {"all: gain=2", "unknown setting 'gain'"},
      {"all: branch=big", "'big' is not a scale"},
      {"all: branch=vector(x)", "finite initial value"},
      {"all: branch=2, branch=3", "branch is given twice"},
      {"all: input=vector(1)", "not a learnable scale"},
      {"final: yes", "allowed: on, off"},
      {"embed[0:1]: on", "takes no layer range"},
      {"all: auto", "'auto' is not a placement"},
  };
  for (const auto& [text, expected] : bad) {
    try {
      parse_placement(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("docs/schemes.md"), std::string::npos) << e.what();
    }
  }
}

using testing::validation_error;

TEST(PlacementText, ValidationSaysWhatIsAllowed) {
  ModelConfig c;
  c.layers = 2;
  c.placement = parse_placement("attn[2:]: post");
  EXPECT_NE(validation_error(c).find("not inside the model's 2 layers"), std::string::npos);
  c.placement = parse_placement("attn[0:3]: post");
  EXPECT_NE(validation_error(c).find("[0:3]"), std::string::npos);
  c.placement = parse_placement("attn[0:2]: post");
  EXPECT_EQ(validation_error(c), "");
  c.scheme = Scheme::ngpt;
  c.norm = NormKind::l2;
  EXPECT_NE(validation_error(c).find("cannot change scheme ngpt"), std::string::npos);
  c.scheme = Scheme::block_attnres;
  c.norm = NormKind::rmsnorm;
  c.placement = parse_placement("all: branch=vector(0.1)");
  EXPECT_NE(validation_error(c).find("scales are not allowed"), std::string::npos);
  c.scheme = Scheme::pre;
  c.mlp = false;
  c.placement = parse_placement("mlp: post");
  EXPECT_NE(validation_error(c).find("mlp is off"), std::string::npos);
  c.mlp = true;
  c.scheme = Scheme::post;
  c.norm = NormKind::none;
  c.placement = {};
  EXPECT_NE(validation_error(c).find("only with scheme pre"), std::string::npos);
  c.scheme = Scheme::rezero;  // no norms: none is fine
  EXPECT_EQ(validation_error(c), "");
}

TEST(PlacementText, StoredInJsonOnlyWhenSet) {
  ModelConfig c;
  EXPECT_FALSE(to_json(c).contains("placement"));  // older configs and hashes stay as they were
  c.placement = parse_placement("all: in, branch=scalar(0)");
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j["placement"], "all: in, branch=scalar(0)");
  EXPECT_EQ(to_string(model_config_from_json(j).placement), "all: in, branch=scalar(0)");
  EXPECT_EQ(scheme_label(c), "pre[all: in, branch=scalar(0)]");
}

using testing::run_once;

// Every additive row without side effects beyond its placement, spelled out as `custom`.
TEST(SchemeTable, CustomPlacementOfEachPresetIsTheNamedSchemeBitForBit) {
  int compared = 0;
  for (const SchemeRow& row : scheme_table()) {
    const bool placement_only = row.residual_mode == ResidualMode::additive && !row.interpolate &&
                                row.init == InitRule::gpt2 && row.scheme != Scheme::custom &&
                                row.head_norms == HeadNormRule::none && !row.value_residual;
    if (!placement_only) continue;
    for (NormKind norm : {NormKind::layernorm, NormKind::rmsnorm}) {
      ModelConfig named;
      named.vocab = 9;
      named.width = 8;
      named.heads = 2;
      named.layers = 3;
      named.mlp_mult = 2;
      named.init_std = 0.3;
      named.mix_layers = 2;
      named.norm = norm;
      named.scheme = row.scheme;
      ModelConfig custom = named;
      custom.scheme = Scheme::custom;
      custom.placement =
          parse_placement(row.placement(named) + fmt::format("; final: {}; embed: {}",
                                                             row.final_norm ? "on" : "off",
                                                             row.embed_norm ? "on" : "off"));
      const testing::ModelOutputs a = run_once(named), b = run_once(custom);
      EXPECT_EQ(a.names, b.names) << row.name;
      EXPECT_EQ(a.params, b.params) << row.name;
      EXPECT_EQ(a.logits, b.logits) << row.name;  // exact: the same kernels in the same order
      EXPECT_EQ(a.grads, b.grads) << row.name;
      ++compared;
    }
  }
  // Every row but ngpt, deepnorm, attnres, block_attnres, hybridnorm (its q, k, v norms),
  // resformer (its value residual) and custom.
  EXPECT_EQ(compared, 2 * 13);
}

}  // namespace
}  // namespace normlab
