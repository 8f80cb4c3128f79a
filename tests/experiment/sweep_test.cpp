// Grids ([sweep]), inheritance (extends) and their errors: the expansion, the names, what each
// run gets, and that every error says file, line and key (sweep.hpp, experiment/overrides.hpp).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <toml++/toml.h>
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/experiment/overrides.hpp"
#include "normlab/experiment/sweep.hpp"
#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

using testing::kTinyExperiment;
using testing::TempDir;

// Reads `text` (saved as e.toml in `dir`, next to any files the test wrote) as `normlab run`
// does; returns the error message, "" when valid (then *out holds the study).
std::string read_study(const TempDir& dir, const std::string& text, Experiment* out = nullptr,
                       const std::vector<std::string>& sets = {}) {
  const std::string file = (dir / "e.toml").string();
  std::ofstream(file) << text;
  try {
    Experiment e =
        read_swept_experiment([&] { return load_experiment_document(file, "", sets); }, file);
    if (out != nullptr) *out = e;
    return "";
  } catch (const UsageError& e) {
    return e.what();
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(Sweep, ExpandsAsAProductWithSchemesNamedByValues) {
  TempDir dir;
  Experiment e;
  const std::string text =
      std::string(kTinyExperiment) + "\n[sweep]\ntrain.lr = [1e-3, 3e-3]\nmodel.width = [5, 7]\n";
  ASSERT_EQ(read_study(dir, text, &e), "");
  // 2 schemes × 2 lr × 2 width; the axes in key order (model before train), last fastest.
  ASSERT_EQ(e.variants.size(), 8u);
  EXPECT_EQ(e.variants[0].label, "pre width=5 lr=0.001");
  EXPECT_EQ(e.variants[0].slug, "pre__width=5__lr=0.001");
  EXPECT_EQ(e.variants[1].label, "post width=5 lr=0.001");
  EXPECT_EQ(e.variants[2].label, "pre width=5 lr=0.003");
  EXPECT_EQ(e.variants[7].label, "post width=7 lr=0.003");
  EXPECT_EQ(e.variants[7].model.width, 7);
  EXPECT_DOUBLE_EQ(e.variants[7].train.adam.lr, 3e-3);
  EXPECT_EQ(e.variants[0].model.width, 5);
  EXPECT_DOUBLE_EQ(e.variants[0].train.adam.lr, 1e-3);
  EXPECT_EQ(e.variants[0].train.steps, 40);  // the rest of [train] is the file's
  ASSERT_EQ(e.variants[7].point.size(), 2u);
  EXPECT_EQ(e.variants[7].point[0], (std::pair<std::string, std::string>{"model.width", "7"}));
  EXPECT_EQ(e.sweep_keys, (std::vector<std::string>{"model.width", "train.lr"}));
  const nlohmann::json j = to_json(e);
  EXPECT_EQ(j["variants"][7]["point"]["train.lr"], "0.003");
  EXPECT_EQ(j["variants"][7]["train"]["lr"], 3e-3);
}

TEST(Sweep, WithoutSweepEveryVariantTrainsAsTheFileSays) {
  TempDir dir;
  Experiment e;
  ASSERT_EQ(read_study(dir, kTinyExperiment, &e), "");
  ASSERT_EQ(e.variants.size(), 2u);
  EXPECT_EQ(e.variants[1].label, "post");
  EXPECT_DOUBLE_EQ(e.variants[1].train.adam.lr, 0.01);
  EXPECT_TRUE(e.variants[1].point.empty());
  EXPECT_FALSE(to_json(e).contains("sweep"));
}

TEST(Sweep, SetCanReplaceASweepList) {
  TempDir dir;
  Experiment e;
  const std::string text = std::string(kTinyExperiment) + "\n[sweep]\ntrain.lr = [1e-3, 3e-3]\n";
  ASSERT_EQ(read_study(dir, text, &e, {"sweep.train.lr=[0.01, 0.02, 0.05]"}), "");
  EXPECT_EQ(e.variants.size(), 6u);
  EXPECT_EQ(e.variants[5].label, "post lr=0.05");
}

TEST(Sweep, SharedLastNamesAreSpelledOut) {
  const std::vector<SweepAxis> axes = [] {
    auto doc = toml::parse("[sweep]\nmodel.beta = [1.0, 2.0]\ntrain.averaging.beta = [0.5]\n");
    return read_sweep_axes(doc, "f.toml");
  }();
  ASSERT_EQ(axes.size(), 2u);
  EXPECT_EQ(axes[0].name, "model.beta");
  EXPECT_EQ(axes[1].name, "train.averaging.beta");
  EXPECT_EQ(sweep_points(axes).size(), 2u);
}

TEST(Sweep, ErrorsNameFileLineAndKey) {
  TempDir dir;
  const std::string base = std::string(kTinyExperiment) + "\n[sweep]\n";
  const std::string file = (dir / "e.toml").string();
  // The line after "[sweep]": the lines of `base` plus one.
  const int sweep_line = static_cast<int>(std::count(base.begin(), base.end(), '\n')) + 1;
  auto at = [&](int line) { return fmt::format("{}:{}: ", file, line); };
  // A wrong value inside the list: the strict reader, at the list's line.
  EXPECT_EQ(read_study(dir, base + "train.lr = [1e-3, -1.0]\n"),
            at(sweep_line) + "key 'lr' in [train] must be a number in (0, inf) (got -1)");
  // An unknown key under [model]: the strict reader names it.
  EXPECT_NE(read_study(dir, base + "model.widht = [5, 7]\n").find("widht"), std::string::npos);
  EXPECT_EQ(read_study(dir, base + "task.v = [6, 8]\n"),
            at(sweep_line) +
                "sweep key 'task.v': only keys of [model] and [train] (except train.lengths) can "
                "be swept; for the task, evaluation, probes or lengths run one study per value "
                "with --set");
  EXPECT_EQ(read_study(dir, base + "train.lengths = [[1, 3], [1, 4]]\n").substr(0, 40),
            (at(sweep_line) + "sweep key 'train.lengths': only").substr(0, 40));
  EXPECT_EQ(read_study(dir, base + "train.lr = 1e-3\n"),
            at(sweep_line) +
                "sweep key 'train.lr': must be a non-empty list of values, e.g. train.lr = "
                "[1e-3, 3e-3]");
  EXPECT_EQ(read_study(dir, base + "train.lr = []\n").substr(at(sweep_line).size()),
            "sweep key 'train.lr': must be a non-empty list of values, e.g. train.lr = "
            "[1e-3, 3e-3]");
  EXPECT_EQ(read_study(dir, base + "train.lr = [1e-3, 0.001]\n"),
            at(sweep_line) + "sweep key 'train.lr' lists 0.001 twice");
  EXPECT_EQ(read_study(dir, base + "train.lr = [[1e-3]]\n"),
            at(sweep_line) +
                "sweep key 'train.lr': each value must be a number, a non-empty string or a "
                "boolean");
  // A quoted key is one key whatever it holds: with a dot it names no setting (it crashed the
  // expansion, which splits keys at their dots).
  const std::string not_bare =
      "': a key of [sweep] is a bare name such as lr or train.lr (unquoted); a quoted key "
      "holding a dot or other characters names no setting";
  EXPECT_EQ(read_study(dir, base + "\"train.lr\" = [0.01, 0.02]\n"),
            at(sweep_line) + "sweep key 'train.lr" + not_bare);
  EXPECT_EQ(read_study(dir, base + "train.\"a.b\" = [1, 2]\n"),
            at(sweep_line) + "sweep key 'a.b" + not_bare);
  EXPECT_EQ(read_study(dir, base + "\"\" = [1, 2]\n"), at(sweep_line) + "sweep key '" + not_bare);
  // A grid beyond kMaxSweepPoints is refused from its axes' sizes, before it is expanded.
  std::string lists[3];
  for (int i = 1; i <= 30; ++i) {
    for (std::string& l : lists) l += (l.empty() ? "" : ", ") + std::to_string(i);
  }
  EXPECT_EQ(read_study(dir, base + "train.lr = [" + lists[0] + "]\ntrain.batch = [" + lists[1] +
                                "]\nmodel.width = [" + lists[2] + "]\n"),
            at(sweep_line - 1) +
                "[sweep] has 30 × 30 × 30 values per key, more than 10000 points in all; split "
                "it into several studies");
  EXPECT_EQ(read_study(dir, "sweep = 3\n" + std::string(kTinyExperiment)),
            at(1) + "key 'sweep' must be a table of lists, e.g. [sweep] train.lr = [1e-3, 3e-3]");
}

TEST(Extends, InheritsAndOverridesWithErrorsInTheBaseFile) {
  TempDir dir;
  std::ofstream(dir / "base.toml") << kTinyExperiment;
  Experiment e;
  ASSERT_EQ(read_study(dir, "extends = \"base.toml\"\nname = \"child\"\n[train]\nlr = 0.02\n", &e),
            "");
  EXPECT_EQ(e.name, "child");
  EXPECT_DOUBLE_EQ(e.train.adam.lr, 0.02);
  EXPECT_EQ(e.train.steps, 40);  // inherited from the base's [train]
  ASSERT_EQ(e.variants.size(), 2u);

  // An error in a value that came from the base names the base file and its line.
  std::ofstream(dir / "bad_base.toml")
      << std::string(kTinyExperiment)
             .replace(std::string(kTinyExperiment).find("steps = 40"), 10, "steps = -4");
  const std::string error = read_study(dir, "extends = \"bad_base.toml\"\n");
  EXPECT_EQ(
      error.rfind((dir / "bad_base.toml").string() + ":15: key 'steps' in [train] must be", 0), 0u)
      << error;

  // A chain: grandchild → child2 → base.
  std::ofstream(dir / "child2.toml") << "extends = \"base.toml\"\n[model]\nwidth = 7\n";
  ASSERT_EQ(read_study(dir, "extends = \"child2.toml\"\n", &e), "");
  EXPECT_EQ(e.variants[0].model.width, 7);
  EXPECT_EQ(e.variants[0].model.layers, 1);
}

// A value a file writes wins over what it inherits, the base's tiers included; a file's own
// tier wins over the file; a tier only the base has can be chosen (docs/experiments.md).
TEST(Extends, AFilesOwnValuesWinOverTheBasesTiers) {
  TempDir dir;
  std::ofstream(dir / "base.toml") << std::string(kTinyExperiment) +
                                          "\n[tier.quick]\nseeds = [1, 2, 3, 4]\n"
                                          "[tier.quick.train]\nsteps = 500\nlr = 0.5\n"
                                          "[tier.full.train]\nsteps = 9000\n";
  Experiment e;
  ASSERT_EQ(read_study(dir, "extends = \"base.toml\"\nseeds = [1, 2]\n[train]\nsteps = 30\n", &e),
            "");
  EXPECT_EQ(e.seeds, (std::vector<uint64_t>{1, 2}));  // not the base tier's four
  EXPECT_EQ(e.train.steps, 30);                       // not the base tier's 500
  EXPECT_DOUBLE_EQ(e.train.adam.lr, 0.5);             // the base tier's: the file has none
  // The file's own tier wins over the file.
  ASSERT_EQ(read_study(dir,
                       "extends = \"base.toml\"\n[train]\nsteps = 30\n"
                       "[tier.quick.train]\nsteps = 20\n",
                       &e),
            "");
  EXPECT_EQ(e.train.steps, 20);
  EXPECT_EQ(e.seeds.size(), 4u);  // the base tier's: the file writes no seeds
  // A tier only the base has, and the tiers of the whole chain in the error.
  std::string applied;
  const auto doc = load_experiment_document(dir / "e.toml", "full", {}, &applied);
  EXPECT_EQ(applied, "full");
  EXPECT_EQ(doc->at_path("train.steps").value<int64_t>(), 30);  // the file's, over the base's full
  try {
    load_experiment_document(dir / "e.toml", "medium", {});
    ADD_FAILURE() << "tier medium accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("has no tier 'medium'; its tiers: full, quick"),
              std::string::npos)
        << error.what();
  }
}

TEST(Extends, CyclesMissingFilesAndWrongTypesAreRefused) {
  TempDir dir;
  const std::string file = (dir / "e.toml").string();
  std::ofstream(dir / "a.toml") << "extends = \"e.toml\"\n";
  EXPECT_EQ(read_study(dir, "extends = \"a.toml\"\n"),
            (dir / "a.toml").string() + ":1: extends " + (dir / "e.toml").string() +
                ", which extends this file again (a cycle)");
  EXPECT_EQ(read_study(dir, "name = \"x\"\nextends = \"nope.toml\"\n"),
            file + ":2: extends " + (dir / "nope.toml").string() + ", which does not exist");
  // A name longer than the file system allows (NAME_MAX, 255 bytes on Linux) is said in
  // normlab's words, not as the library's filesystem_error (found by fuzz_experiment_overrides).
  const std::string error = read_study(dir, "extends = \"" + std::string(300, 'a') + ".toml\"\n");
  EXPECT_EQ(error.rfind(file + ":1: extends " + (dir / "aaaa").string(), 0), 0u) << error;
  EXPECT_NE(error.find("which cannot be read: File name too long"), std::string::npos) << error;
  EXPECT_EQ(read_study(dir, "extends = 3\n"),
            file +
                ":1: key 'extends' must be the path of a TOML file, e.g. extends = \"base.toml\" "
                "(relative to this file's folder)");
}

// The command line: a sweep runs every point, each run in its own folder named by its values,
// and the store records each run's values.
TEST(Sweep, RunsEveryPointThroughTheCommandLine) {
  TempDir dir;
  const std::string file = (dir / "s.toml").string();
  std::string text = kTinyExperiment;
  text.replace(text.find("seeds = [1, 2]"), 14, "seeds = [1]");
  text.replace(text.find("steps = 40"), 10, "steps = 10");
  std::ofstream(file) << text << "\n[sweep]\ntrain.lr = [0.01, 0.02]\n";
  const auto out = dir / "out";
  const testing::RunResult r = testing::run_normlab({"run", file, "--out", out.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  for (const char* run : {"pre__lr=0.01__seed1", "pre__lr=0.02__seed1", "post__lr=0.01__seed1",
                          "post__lr=0.02__seed1"}) {
    EXPECT_TRUE(std::filesystem::exists(out / "runs" / run / "eval_raw.json")) << run;
  }
  const std::string run_json = testing::slurp(out / "runs" / "post__lr=0.02__seed1" / "run.json");
  EXPECT_EQ(nlohmann::json::parse(run_json)["train"]["lr"], 0.02);
  const testing::RunResult q = testing::run_normlab(
      {"results", out.string(), "--sql",
       "SELECT variant, json_extract(values_json, '$.\"train.lr\"') AS lr FROM runs ORDER BY "
       "variant",
       "--csv"});
  ASSERT_TRUE(q.exited && q.exit_code == 0) << q.describe();
  EXPECT_EQ(q.out,
            "variant,lr\npost lr=0.01,0.01\npost lr=0.02,0.02\npre lr=0.01,0.01\npre "
            "lr=0.02,0.02\n");
}

}  // namespace
}  // namespace normlab
