// `normlab run --reuse DIR` (kept_runs.hpp, restore_reused_run): a run another study trained
// with the same settings is copied, not trained again, and gives the rows training it would;
// a run of other settings trains; a study with a [probe] table reuses nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::run_normlab;
using testing::TempDir;

// The tiny study under another name, with pre alone or with pre and post.
std::string write_study(const TempDir& dir, const std::string& name, const std::string& schemes,
                        const std::string& more = "") {
  std::string text = testing::kTinyExperiment;
  text.replace(text.find("name = \"tiny\""), 13, "name = \"" + name + "\"");
  text.replace(text.find("schemes = [\"pre\", \"post\"]"), 25, "schemes = " + schemes);
  const std::string file = (dir / (name + ".toml")).string();
  std::ofstream(file) << text << more;
  return file;
}

// results.csv without its first column, the study's name.
std::string rows_without_study(const fs::path& csv) {
  std::istringstream in(testing::slurp(csv));
  std::string line, out;
  while (std::getline(in, line)) out += line.substr(line.find(',')) + "\n";
  return out;
}

TEST(ReusedRuns, ARunOfTheSameSettingsIsCopiedAndGivesTheSameRows) {
  TempDir dir;
  const std::string first = write_study(dir, "first", "[\"pre\"]");
  const std::string second = write_study(dir, "second", "[\"pre\", \"post\"]");
  ASSERT_EQ(run_normlab({"run", first, "--out", (dir / "a").string()}).exit_code, 0);

  const auto reusing = run_normlab(
      {"run", second, "--out", (dir / "b").string(), "--reuse", (dir / "a" / "runs").string()});
  ASSERT_TRUE(reusing.exited && reusing.exit_code == 0) << reusing.describe();
  EXPECT_NE(reusing.err.find("4 runs (2 to do, 2 already done, 2 of them another study's runs "
                             "with the same settings (--reuse))"),
            std::string::npos)
      << reusing.err;
  // The copied runs have no weights; post's trained here.
  EXPECT_FALSE(fs::exists(dir / "b" / "runs" / "pre__seed1" / "final"));
  EXPECT_TRUE(fs::exists(dir / "b" / "runs" / "post__seed1" / "final"));

  // Training every run gives the same rows.
  ASSERT_EQ(run_normlab({"run", second, "--out", (dir / "c").string()}).exit_code, 0);
  EXPECT_EQ(testing::slurp(dir / "b" / "results.csv"), testing::slurp(dir / "c" / "results.csv"));
  EXPECT_EQ(testing::slurp(dir / "b" / "curves.csv"), testing::slurp(dir / "c" / "curves.csv"));
  EXPECT_EQ(rows_without_study(dir / "a" / "results.csv"),
            rows_without_study(dir / "b" / "results.csv")
                .substr(0, rows_without_study(dir / "a" / "results.csv").size()));
}

TEST(ReusedRuns, ARunOfOtherSettingsTrains) {
  TempDir dir;
  const std::string first = write_study(dir, "first", "[\"pre\"]");
  const std::string second = write_study(dir, "second", "[\"pre\"]");
  ASSERT_EQ(run_normlab({"run", first, "--out", (dir / "a").string()}).exit_code, 0);
  const auto other = run_normlab({"run", second, "--out", (dir / "b").string(), "--set",
                                  "train.lr=0.02", "--reuse", (dir / "a" / "runs").string()});
  ASSERT_TRUE(other.exited && other.exit_code == 0) << other.describe();
  EXPECT_NE(other.err.find("2 runs (2 to do, 0 already done)"), std::string::npos) << other.err;
}

TEST(ReusedRuns, AStudyWithProbesReusesNothing) {
  TempDir dir;
  const std::string probe = "\n[probe]\ndilution = true\nsamples = 16\n";
  const std::string first = write_study(dir, "first", "[\"pre\"]", probe);
  const std::string second = write_study(dir, "second", "[\"pre\"]", probe);
  ASSERT_EQ(run_normlab({"run", first, "--out", (dir / "a").string()}).exit_code, 0);
  const auto probed = run_normlab(
      {"run", second, "--out", (dir / "b").string(), "--reuse", (dir / "a" / "runs").string()});
  ASSERT_TRUE(probed.exited && probed.exit_code == 0) << probed.describe();
  EXPECT_NE(probed.err.find("second: --reuse not used: the study's [probe] table needs each run's "
                            "weights"),
            std::string::npos)
      << probed.err;
  EXPECT_NE(probed.err.find("2 runs (2 to do, 0 already done)"), std::string::npos) << probed.err;
}

}  // namespace
}  // namespace normlab
