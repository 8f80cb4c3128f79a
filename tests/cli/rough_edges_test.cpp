// Rough edges a new user hit (issue 13, item 7), each with the behaviour it has now.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

using testing::run_normlab;
using testing::TempDir;

TEST(RoughEdges, AnUnknownOptionIsNamedBeforeAMissingRequiredOne) {
  const auto r = run_normlab({"eval", "--ckpt", "X"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
  EXPECT_NE(r.err.find("unknown option '--ckpt'"), std::string::npos) << r.err;
}

TEST(RoughEdges, TestingAidsAreNotInTheUsersHelp) {
  const auto r = run_normlab({"train", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out.find("--kill-at-step"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--die-with-parent"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--interrupt-at-step"), std::string::npos) << r.out;
}

// CLI11 shows negated flags as "--no-mlp{false}" next to "(default on)"; the help does not.
TEST(RoughEdges, FlagsShowNoValuesInTheHelp) {
  for (const char* command : {"init", "train-steps", "probe"}) {
    const auto r = run_normlab({command, "--help"});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_EQ(r.out.find("{false}"), std::string::npos) << command << "\n" << r.out;
    EXPECT_EQ(r.out.find("{true}"), std::string::npos) << command << "\n" << r.out;
  }
  const auto init = run_normlab({"init", "--help"});
  EXPECT_NE(init.out.find("--mlp,--no-mlp "), std::string::npos) << init.out;
  EXPECT_NE(init.out.find("MLP sublayer in each block (default on)"), std::string::npos);
  // Options that take values keep their type and default.
  EXPECT_NE(init.out.find("--width INT"), std::string::npos) << init.out;
}

TEST(RoughEdges, AWeightsFileIsACheckpoint) {
  TempDir tmp;
  const std::string ck = (tmp / "ck").string();
  const auto init = run_normlab(
      {"init", "--scheme", "pre", "--vocab", "7", "--width", "8", "--layers", "1", "--out", ck});
  ASSERT_EQ(init.exit_code, 0) << init.describe();
  const auto r =
      run_normlab({"eval", "--checkpoint", ck + "/model.safetensors", "--task", "set_complement",
                   "--task-param", "v=6", "--samples", "8", "--out", (tmp / "e").string()});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  // Without --lengths, the lengths the task has: set_complement(6) stops at 5.
  const auto e = nlohmann::json::parse(testing::slurp(tmp / "e.json"));
  std::vector<int64_t> lengths;
  for (const auto& row : e.at("results")) lengths.push_back(row.at("length").get<int64_t>());
  EXPECT_EQ(lengths, (std::vector<int64_t>{1, 2, 4, 5}));
  const auto missing = run_normlab({"eval", "--checkpoint", ck + "/nope.safetensors"});
  EXPECT_EQ(missing.exit_code, 1) << missing.describe();
  EXPECT_NE(missing.err.find("a weights file"), std::string::npos) << missing.err;
}

// `forward` takes what eval and the probes take: a run folder (its final raw weights, or
// --weights ema|bema), its final/, or one weights file.
TEST(RoughEdges, ForwardTakesARunFolder) {
  TempDir dir;
  std::ofstream(dir / "tiny.toml") << testing::kTinyExperiment;
  ASSERT_EQ(
      run_normlab({"run", (dir / "tiny.toml").string(), "--out", (dir / "out").string()}).exit_code,
      0);
  const std::filesystem::path run = dir / "out" / "runs" / "pre__seed1";
  auto logits = [](const std::string& checkpoint, const std::string& weights) {
    auto r = run_normlab(
        {"forward", "--checkpoint", checkpoint, "--tokens", "1 2 3", "--weights", weights});
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    return r.out;
  };
  const std::string raw = logits(run.string(), "raw");
  EXPECT_NE(raw.find("{\"logits\":[["), std::string::npos) << raw;
  EXPECT_EQ(raw, logits((run / "final").string(), "raw"));
  EXPECT_EQ(raw, logits((run / "final" / "model.safetensors").string(), "raw"));
  const std::string bema = logits(run.string(), "bema");
  EXPECT_EQ(bema, logits((run / "final" / "bema.safetensors").string(), "raw"));
  EXPECT_NE(bema, raw);
}

}  // namespace
}  // namespace normlab
