// `normlab run --keep DIR` (kept_runs.hpp): each run kept, probed and without checkpoints, as it
// ends; a study whose results folder is lost is restored from the kept runs and gives the same
// tables without training them again.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::run_normlab;
using testing::TempDir;

const char* kRuns[] = {"pre__seed1", "pre__seed2", "post__seed1", "post__seed2"};

// The tiny study with the dilution probe, whose files a kept run must carry.
std::string write_study_with_dilution(const TempDir& dir) {
  const std::string file = (dir / "tiny.toml").string();
  std::ofstream(file) << testing::kTinyExperiment << "\n[probe]\ndilution = true\nsamples = 16\n";
  return file;
}

testing::RunResult run(const std::string& file, const fs::path& out, const fs::path& keep,
                       const std::vector<std::string>& more = {}) {
  std::vector<std::string> args = {"run", file, "--out", out.string(), "--keep", keep.string()};
  args.insert(args.end(), more.begin(), more.end());
  return run_normlab(args);
}

TEST(KeptRuns, ALostResultsFolderIsRestoredWithTheSameTables) {
  TempDir dir;
  const std::string file = write_study_with_dilution(dir);
  const fs::path keep = dir / "kept";
  const auto first = run(file, dir / "first", keep);
  ASSERT_TRUE(first.exited && first.exit_code == 0) << first.describe();
  for (const char* name : kRuns) {
    const fs::path kept = keep / name;
    for (const char* f : {"run.json", "eval_raw.json", "eval_raw.csv", "metrics.jsonl",
                          "probe_dilution.csv", "probe_dilution_fit.csv"}) {
      EXPECT_TRUE(fs::is_regular_file(kept / f)) << kept / f;
    }
    EXPECT_FALSE(fs::exists(kept / "checkpoint")) << name;
    EXPECT_FALSE(fs::exists(kept / "final")) << name;
    EXPECT_FALSE(fs::exists(kept / "train.log")) << name;
    EXPECT_FALSE(fs::exists(kept / ".lock")) << name;
    EXPECT_FALSE(fs::exists(kept / "evaluating.json")) << name;  // removed once evaluated
    EXPECT_EQ(testing::slurp(kept / "run.json"),
              testing::slurp(dir / "first" / "runs" / name / "run.json"));
  }

  // The results folder is lost, and one run ended without being kept (a copy cut short has
  // no run.json). Only that run trains; the others come back with their probes.
  fs::remove(keep / "post__seed2" / "run.json");
  const fs::path second = dir / "second";
  const auto again = run(file, second, keep);
  ASSERT_TRUE(again.exited && again.exit_code == 0) << again.describe();
  EXPECT_NE(again.err.find("4 runs (1 to do, 3 already done, 3 of them restored from "),
            std::string::npos)
      << again.err;
  EXPECT_EQ(again.err.find("dilution probe: pre seed 1"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("dilution probe: post seed 2"), std::string::npos) << again.err;
  EXPECT_FALSE(fs::exists(second / "runs" / "pre__seed1" / "final"));
  EXPECT_TRUE(fs::exists(second / "runs" / "post__seed2" / "final"));
  EXPECT_TRUE(fs::is_regular_file(keep / "post__seed2" / "run.json"));
  for (const char* table :
       {"results.csv", "summary.csv", "curves.csv", "dilution.csv", "dilution_fit.csv"}) {
    EXPECT_EQ(testing::slurp(second / table), testing::slurp(dir / "first" / table)) << table;
  }
  // The store holds every run's rows, the restored ones too.
  const auto count = run_normlab({"results", second.string(), "--csv", "--sql",
                                  "SELECT COUNT(DISTINCT run_hash) FROM results"});
  ASSERT_EQ(count.exit_code, 0) << count.describe();
  EXPECT_EQ(count.out, "COUNT(DISTINCT run_hash)\n4\n");
}

// --only-kept restores the kept runs and trains nothing: the run not kept stays to do, with no
// rows in the tables; without --keep there is nothing to restore.
TEST(KeptRuns, OnlyKeptRestoresTheKeptRunsAndTrainsNothing) {
  TempDir dir;
  const std::string file = write_study_with_dilution(dir);
  const fs::path keep = dir / "kept";
  ASSERT_EQ(run(file, dir / "first", keep).exit_code, 0);
  fs::remove(keep / "post__seed2" / "run.json");
  const fs::path second = dir / "second";
  const auto restored = run(file, second, keep, {"--only-kept"});
  ASSERT_TRUE(restored.exited && restored.exit_code == 0) << restored.describe();
  EXPECT_NE(restored.err.find("4 runs (3 done, 3 of them restored from "), std::string::npos)
      << restored.err;
  EXPECT_NE(restored.err.find("; 1 not trained: --only-kept)"), std::string::npos) << restored.err;
  EXPECT_FALSE(fs::exists(second / "runs" / "post__seed2" / "metrics.jsonl"));
  const std::string results = testing::slurp(second / "results.csv");
  EXPECT_NE(results.find(",post,post,rmsnorm,1,"), std::string::npos) << results;
  EXPECT_EQ(results.find(",post,post,rmsnorm,2,"), std::string::npos) << results;

  const auto refused = run_normlab({"run", file, "--out", (dir / "third").string(), "--only-kept"});
  EXPECT_EQ(refused.exit_code, 2) << refused.describe();
  EXPECT_NE(refused.err.find("--only-kept restores kept runs: name their folder with --keep"),
            std::string::npos)
      << refused.err;
}

TEST(KeptRuns, RunsThatEndedBeforeKeepingAreKeptWhenTheStudyResumes) {
  TempDir dir;
  const std::string file = write_study_with_dilution(dir);
  const auto plain = run_normlab({"run", file, "--out", (dir / "out").string()});
  ASSERT_TRUE(plain.exited && plain.exit_code == 0) << plain.describe();
  const auto kept = run(file, dir / "out", dir / "kept");
  ASSERT_TRUE(kept.exited && kept.exit_code == 0) << kept.describe();
  EXPECT_NE(kept.err.find("(0 to do, 4 already done)"), std::string::npos) << kept.err;
  for (const char* name : kRuns) {
    EXPECT_TRUE(fs::is_regular_file(dir / "kept" / name / "probe_dilution.csv")) << name;
  }
}

TEST(KeptRuns, AKeptRunOfOtherSettingsIsRefused) {
  TempDir dir;
  const std::string file = write_study_with_dilution(dir);
  ASSERT_EQ(run(file, dir / "a", dir / "kept").exit_code, 0);
  const auto other = run(file, dir / "b", dir / "kept", {"--set", "train.steps=41"});
  EXPECT_EQ(other.exit_code, 2) << other.describe();
  EXPECT_NE(other.err.find("pre__seed1: the kept run was trained with other settings than pre "
                           "seed 1 asks for now; remove it to train the run again"),
            std::string::npos)
      << other.err;
}

TEST(KeptRuns, AKeptRunOfAnOlderVersionIsRestored) {
  // An older normlab's run.json lacks the fields added since; at their defaults they are the
  // same settings (settings_as_read), so the kept runs are restored, not refused or retrained.
  TempDir dir;
  const std::string file = write_study_with_dilution(dir);
  ASSERT_EQ(run(file, dir / "a", dir / "kept").exit_code, 0);
  for (const char* name : kRuns) {
    const fs::path run_json = dir / "kept" / name / "run.json";
    nlohmann::json j = nlohmann::json::parse(testing::slurp(run_json));
    ASSERT_EQ(j["model"].at("embed_scale"), 1.0) << name;
    ASSERT_EQ(j["model"].at("dropout"), 0.0) << name;
    j["model"].erase("embed_scale");
    j["model"].erase("dropout");
    std::ofstream(run_json) << j.dump(2) << "\n";
  }
  const auto again = run(file, dir / "b", dir / "kept");
  ASSERT_TRUE(again.exited && again.exit_code == 0) << again.describe();
  EXPECT_NE(again.err.find("4 runs (0 to do, 4 already done, 4 of them restored from "),
            std::string::npos)
      << again.err;
  EXPECT_EQ(testing::slurp(dir / "b" / "results.csv"), testing::slurp(dir / "a" / "results.csv"));
}

TEST(KeptRuns, AParticleStudyHasNoRunsToKeep) {
  TempDir dir;
  const fs::path file = fs::path(NORMLAB_SOURCE_DIR) / "experiments" / "particles_symmetric.toml";
  const auto r = run_normlab(
      {"run", file.string(), "--out", (dir / "p").string(), "--keep", (dir / "kept").string()});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(
      r.err.find("--keep and --reuse are for a training study's runs; a particle study has none"),
      std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace normlab
