// Tiers and --set (experiment/overrides.hpp): what the merge replaces and what it merges, the
// errors, and that errors inside a tier or a --set still say where the value came from.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include <toml++/toml.h>

#include "normlab/base/errors.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/experiment/overrides.hpp"
#include "normlab/io/toml_reader.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::TempDir;

const char* kTiered = R"toml(name = "tiered"
schemes = ["pre", "post"]
seeds = [1, 2, 3]

[task]
name = "set_complement"
v = 6

[model]
width = 5
mlp = false

[train]
steps = 40
batch = 8
lengths = [1, 3]
checkpoint_every = 20

[train.averaging]
every = 5
start = 10

[eval]
lengths = [2, 5]
samples = 32

[[extra]]
a = 1
[[extra]]
a = 2

[tier.quick]
seeds = [7]

[tier.quick.train]
steps = 10

[tier.quick.train.averaging]
every = 2

[tier.full]
schemes = ["peri"]
[[tier.full.extra]]
b = 3
)toml";

toml::table parse(const std::string& text) {
  return toml::parse(std::string_view(text), std::string_view("t.toml"));
}

TEST(Tiers, NamesAreSortedAndAbsentTiersGiveNone) {
  const toml::table doc = parse(kTiered);
  EXPECT_EQ(tier_names(doc, "t.toml"), (std::vector<std::string>{"full", "quick"}));
  EXPECT_TRUE(tier_names(parse("name = \"x\"\n"), "t.toml").empty());
}

TEST(Tiers, ValuesReplaceAndTablesMergeRecursively) {
  toml::table doc = parse(kTiered);
  EXPECT_EQ(apply_tier(doc, "t.toml", "quick"), "quick");
  EXPECT_EQ(doc.get("tier"), nullptr) << "the tier table is removed";
  // An array is replaced, not appended to.
  const toml::array* seeds = doc.get_as<toml::array>("seeds");
  ASSERT_NE(seeds, nullptr);
  ASSERT_EQ(seeds->size(), 1u);
  EXPECT_EQ((*seeds)[0].value<int64_t>(), 7);
  // Nested tables merge: the tier's keys win, the file's other keys stay.
  EXPECT_EQ(doc.at_path("train.steps").value<int64_t>(), 10);
  EXPECT_EQ(doc.at_path("train.batch").value<int64_t>(), 8);
  EXPECT_EQ(doc.at_path("train.averaging.every").value<int64_t>(), 2);
  EXPECT_EQ(doc.at_path("train.averaging.start").value<int64_t>(), 10);
  EXPECT_EQ(doc.at_path("schemes[1]").value<std::string>(), "post");
}

TEST(Tiers, ArraysOfTablesAreReplaced) {
  toml::table doc = parse(kTiered);
  apply_tier(doc, "t.toml", "full");
  const toml::array* extra = doc.get_as<toml::array>("extra");
  ASSERT_NE(extra, nullptr);
  ASSERT_EQ(extra->size(), 1u);
  EXPECT_EQ(doc.at_path("extra[0].b").value<int64_t>(), 3);
  EXPECT_FALSE(doc.at_path("extra[0].a"));
  EXPECT_EQ(doc.at_path("schemes").as_array()->size(), 1u);
  EXPECT_EQ(doc.at_path("seeds").as_array()->size(), 3u) << "full does not touch seeds";
}

TEST(Tiers, DefaultIsQuickAndUnknownTierNamesTheTiers) {
  toml::table doc = parse(kTiered);
  EXPECT_EQ(apply_tier(doc, "t.toml", ""), "quick");
  doc = parse(kTiered);
  try {
    apply_tier(doc, "t.toml", "medium");
    FAIL() << "an unknown tier must be refused";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--tier medium: t.toml has no tier 'medium'; its tiers: full, quick");
  }
  toml::table plain = parse("name = \"x\"\n");
  EXPECT_EQ(apply_tier(plain, "t.toml", ""), "");
  EXPECT_THROW(apply_tier(plain, "t.toml", "quick"), UsageError);
}

TEST(Tiers, TierThatIsNotATableIsRefusedWithItsLine) {
  toml::table doc = parse("name = \"x\"\n[tier]\nquick = 3\n");
  try {
    tier_names(doc, "t.toml");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("t.toml:3: tier 'quick' must be a table", 0), 0u)
        << e.what();
  }
}

// The reader's errors about a value that came from a tier name the tier's line: merged nodes
// are moved, and a toml++ copy would have lost the source region.
TEST(Tiers, ErrorsInsideATierNameFileLineAndKey) {
  TempDir tmp;
  std::string text = kTiered;
  text.replace(text.find("steps = 10"), 10, "stpes = 10");
  text += "\n[tier.odd.eval]\nsamples = \"many\"\n";
  std::ofstream(tmp / "e.toml") << text;
  const std::string file = (tmp / "e.toml").string();
  const auto line_of = [&](const std::string& needle) {
    const std::string before = text.substr(0, text.find(needle));
    return 1 + std::count(before.begin(), before.end(), '\n');
  };
  const auto stpes_line = line_of("stpes = 10"), samples_line = line_of("samples = \"many\"");
  ASSERT_GT(stpes_line, 30);  // inside the tier, not the file's [train]
  for (const auto& [tier, expected] :
       {std::pair<std::string, std::string>{
            "quick", fmt::format(":{}: unknown key 'stpes' in [train]", stpes_line)},
        {"odd", fmt::format(":{}: key 'samples' in [eval] must be an integer", samples_line)}}) {
    auto doc = parse_toml_file(tmp / "e.toml");
    apply_tier(*doc, file, tier);
    TomlSection top(doc.get(), file, "top level");
    try {
      read_experiment(top, file);
      FAIL() << tier;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(file + expected, 0), 0u) << e.what();
    }
  }
}

TEST(Sets, TypesAndNestedKeys) {
  toml::table doc = parse(kTiered);
  apply_set(doc, "train.lr=3e-3");
  apply_set(doc, "train.schedule = \"cosine\"");
  apply_set(doc, "seeds=[4, 5]");
  apply_set(doc, "model.causal=true");
  apply_set(doc, "train.averaging.kappa=0.25");
  apply_set(doc, "task.language=3");
  EXPECT_DOUBLE_EQ(*doc.at_path("train.lr").value<double>(), 3e-3);
  EXPECT_EQ(doc.at_path("train.schedule").value<std::string>(), "cosine");
  EXPECT_EQ(doc.at_path("seeds").as_array()->size(), 2u);
  EXPECT_EQ(doc.at_path("seeds[1]").value<int64_t>(), 5);
  EXPECT_EQ(doc.at_path("model.causal").value<bool>(), true);
  EXPECT_EQ(doc.at_path("model.width").value<int64_t>(), 5) << "siblings stay";
  EXPECT_DOUBLE_EQ(*doc.at_path("train.averaging.kappa").value<double>(), 0.25);
  EXPECT_EQ(doc.at_path("train.averaging.every").value<int64_t>(), 5);
  EXPECT_EQ(doc.at_path("task.language").value<int64_t>(), 3);
  EXPECT_EQ(doc.at_path("task.name").value<std::string>(), "set_complement");
}

// "tier.NAME.KEY=VALUE" sets KEY at tier NAME alone, in its place among the sets.
TEST(Sets, ATiersValueAppliesAtThatTierAlone) {
  TempDir tmp;
  const auto file = tmp / "t.toml";
  std::ofstream(file) << kTiered;
  const std::vector<std::string> sets = {"train.batch=4", "tier.full.train.steps=77",
                                         "tier.quick.train.batch = 6"};
  const auto quick = load_experiment_document(file, "quick", sets);
  EXPECT_EQ(quick->at_path("train.steps").value<int64_t>(), 10) << "the quick tier's own";
  EXPECT_EQ(quick->at_path("train.batch").value<int64_t>(), 6) << "after train.batch=4";
  const auto full = load_experiment_document(file, "full", sets);
  EXPECT_EQ(full->at_path("train.steps").value<int64_t>(), 77);
  EXPECT_EQ(full->at_path("train.batch").value<int64_t>(), 4);
  EXPECT_EQ(full->get("tier"), nullptr);
  for (const std::string bad : {"tier.paper.train.steps=5", "tier.full=3", "tier.full.steps"}) {
    try {
      load_experiment_document(file, "full", {bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--set '" + bad + "': ", 0), 0u) << e.what();
    }
  }
}

TEST(Sets, MalformedAssignmentsNameTheOption) {
  toml::table doc = parse(kTiered);
  for (const std::string bad : {"train.lr", "train..lr=1", "=3",
                                "train.lr=", "train.schedule=cosine", "train lr=1", "seeds=[1,"}) {
    try {
      apply_set(doc, bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--set '" + bad + "': ", 0), 0u) << e.what();
    }
  }
}

// A value spanning lines is parsed as TOML text, so it could add keys and tables of its own.
TEST(Sets, AValueSetsItsKeyAlone) {
  toml::table doc = parse(kTiered);
  for (const std::string bad : {"train.lr=0.1\nmodel.width=3", "train.lr=0.1\n[x]\ny=1",
                                "seeds=[1]\ntrain.lr=9", "train.averaging.kappa=0.5\nz=1"}) {
    try {
      apply_set(doc, bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("the value sets other keys than"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(doc.at_path("model.width").value<int64_t>(), 5) << "nothing merged";
  EXPECT_EQ(doc.at_path("x").node(), nullptr);
  // A value on several lines that is one value is still one value.
  apply_set(doc, "seeds=[1,\n2]");
  EXPECT_EQ(doc.at_path("seeds").as_array()->size(), 2u);
}

TEST(Sets, WrongTypeFromASetIsLocatedAsTheSet) {
  TempDir tmp;
  std::ofstream(tmp / "e.toml") << kTiered;
  const std::string file = (tmp / "e.toml").string();
  auto doc = parse_toml_file(tmp / "e.toml");
  apply_tier(*doc, file, "quick");
  apply_set(*doc, "train.batch=\"big\"");
  TomlSection top(doc.get(), file, "top level");
  try {
    read_experiment(top, file);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--set train.batch=\"big\": key 'batch' in [train] must be an integer");
  }
}

TEST(Sets, FolderNames) {
  EXPECT_EQ(study_folder_name("s", "", {}), "s");
  EXPECT_EQ(study_folder_name("s", "quick", {}), "s-quick");
  EXPECT_EQ(study_folder_name("s", "full", {"task.language = 3"}), "s-full__task.language=3");
  EXPECT_EQ(study_folder_name("s", "", {"train.schedule=\"cosine\"", "seeds=[1, 2]"}),
            "s__train.schedule=cosine__seeds=1-2");
  EXPECT_EQ(normalized_set(" train.lr = 3e-3 "), "train.lr=3e-3");
  // A tier's set names the folder at its tier alone, without its tier prefix.
  const std::vector<std::string> panel = {"task.pairs=16", "tier.full.train.steps = 6256",
                                          "tier.paper.train.steps=25024"};
  EXPECT_EQ(study_folder_name("mqar", "quick", panel), "mqar-quick__task.pairs=16");
  EXPECT_EQ(study_folder_name("mqar", "full", panel), "mqar-full__task.pairs=16__train.steps=6256");
  EXPECT_EQ(study_folder_name("mqar", "paper", panel),
            "mqar-paper__task.pairs=16__train.steps=25024");
}

}  // namespace
}  // namespace normlab
