// `normlab run FILE --dry-run`: every resolved value with where it was written, the runs and
// their state, nothing trained.
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

TEST(DryRun, SaysWhereEachValueComesFromAndWhatIsLeftToDo) {
  TempDir dir;
  std::ofstream(dir / "base.toml")
      << std::string(testing::kTinyExperiment) + "\n[tier.quick]\nseeds = [1, 2, 3]\n";
  std::ofstream(dir / "child.toml") << "extends = \"base.toml\"\nseeds = [1]\n";
  const fs::path out = dir / "out";
  const std::string child = (dir / "child.toml").string();
  auto r =
      run_normlab({"run", child, "--out", out.string(), "--dry-run", "--set", "train.steps=30"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("seeds = [1]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# " + child + ":2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# " + (dir / "base.toml").string() + ":10\n"), std::string::npos)
      << r.out;  // width = 5, from the base
  EXPECT_NE(r.out.find("steps = 30"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# --set train.steps=30\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 runs (2 variants × 1 seeds)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("runs/pre__seed1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 runs to do: about "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" at a time, the longest run "), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out)) << "a dry run trained or wrote something";

  // After the runs: each says so, and there is nothing to estimate.
  ASSERT_EQ(run_normlab({"run", child, "--out", out.string(), "--set", "train.steps=30"}).exit_code,
            0);
  r = run_normlab({"run", child, "--out", out.string(), "--dry-run", "--set", "train.steps=30"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("runs/post__seed1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" finished\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing to train: every run has ended"), std::string::npos) << r.out;
}

// A swept key shows its file's value, marked as replaced by each run's point; the runs are
// listed per point.
TEST(DryRun, MarksSweptKeys) {
  TempDir dir;
  std::ofstream(dir / "swept.toml")
      << std::string(testing::kTinyExperiment) + "\n[sweep]\ntrain.lr = [0.02, 0.03]\n";
  const auto r = run_normlab(
      {"run", (dir / "swept.toml").string(), "--out", (dir / "out").string(), "--dry-run"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  const size_t line = r.out.find("  train.lr = 0.01 ");
  ASSERT_NE(line, std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(line, r.out.find('\n', line) - line).find("(each run: its [sweep] value)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("runs/post__lr=0.03__seed2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("8 runs (4 variants × 2 seeds)"), std::string::npos) << r.out;
}

// The estimate trains at the mean training length, rounded up to one the task accepts: Dyck's
// strings have even lengths, and (2 + 40 + 1) / 2 = 21 is not one.
TEST(DryRun, EstimatesAtALengthTheTaskAccepts) {
  TempDir dir;
  std::ofstream(dir / "dyck.toml") << R"toml(name = "tiny_dyck"
schemes = ["pre"]
seeds = [1]
[task]
name = "dyck"
k = 2
m = 4
[model]
width = 5
layers = 1
mlp = false
[train]
steps = 40
batch = 4
lengths = [2, 40]
[eval]
lengths = [40]
samples = 8
)toml";
  const auto r = run_normlab(
      {"run", (dir / "dyck.toml").string(), "--out", (dir / "out").string(), "--dry-run"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("1 runs to do: about "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace normlab
