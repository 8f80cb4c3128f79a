// A run killed with SIGKILL and resumed reaches final weights bit-identical to an
// uninterrupted run; a diverging run stops with its last good checkpoint kept.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>

#include <csignal>
#include <fstream>

#include <nlohmann/json.hpp>

#include "normlab/trainer.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::run_normlab;
using testing::slurp;
using testing::TempDir;

RunSpec small_run(Scheme scheme) {
  RunSpec spec;
  spec.label = "resume test";
  spec.task = {{"name", "set_complement"}, {"v", 8}, {"targets", "sampled"}};
  spec.model.vocab = 9;
  spec.model.width = 8;
  spec.model.heads = 2;
  spec.model.layers = 2;
  spec.model.scheme = scheme;
  spec.train.steps = 60;
  spec.train.batch = 16;
  spec.train.min_len = 1;
  spec.train.max_len = 6;
  spec.train.warmup = 5;
  spec.train.checkpoint_every = 10;
  spec.train.log_every = 1;
  spec.train.averaging.every = 4;
  spec.train.averaging.start = 3;
  spec.train.seed = 5;
  return spec;
}

std::vector<nlohmann::json> metrics_lines(const std::filesystem::path& file) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

class Resume : public ::testing::TestWithParam<Scheme> {};

TEST_P(Resume, KilledAndResumedRunMatchesUninterruptedRun) {
  TempDir tmp;
  const RunSpec spec = small_run(GetParam());
  prepare_run(tmp / "whole", spec);
  prepare_run(tmp / "killed", spec);

  const auto whole = run_normlab({"train", (tmp / "whole").string()});
  ASSERT_TRUE(whole.exited && whole.exit_code == 0) << whole.describe();

  // Killed after step 37: the last checkpoint is step 30, so 7 steps are redone.
  const auto killed = run_normlab({"train", (tmp / "killed").string(), "--kill-at-step", "37"});
  ASSERT_FALSE(killed.exited) << killed.describe();
  ASSERT_EQ(killed.signal, SIGKILL);
  ASSERT_FALSE(std::filesystem::exists(tmp / "killed" / "final"));
  EXPECT_EQ(read_run_status(tmp / "killed"), RunStatus::running);

  const auto resumed = run_normlab({"train", (tmp / "killed").string(), "--resume"});
  ASSERT_TRUE(resumed.exited && resumed.exit_code == 0) << resumed.describe();
  EXPECT_EQ(read_run_status(tmp / "killed"), RunStatus::finished);

  for (const char* file : {"model.safetensors", "ema.safetensors", "bema.safetensors"}) {
    const std::string a = slurp(tmp / "whole" / "final" / file);
    const std::string b = slurp(tmp / "killed" / "final" / file);
    ASSERT_FALSE(a.empty());
    EXPECT_TRUE(a == b) << file << " differs between the uninterrupted and the resumed run";
  }
  // The averaged weights are not the raw ones (averaging really ran).
  EXPECT_NE(slurp(tmp / "whole" / "final" / "model.safetensors"),
            slurp(tmp / "whole" / "final" / "bema.safetensors"));

  // The metrics log of the resumed run has each step once, with the same losses.
  const auto a = metrics_lines(tmp / "whole" / "metrics.jsonl");
  const auto b = metrics_lines(tmp / "killed" / "metrics.jsonl");
  ASSERT_EQ(a.size(), 60u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(b[i]["step"], a[i]["step"]);
    EXPECT_EQ(b[i]["loss"], a[i]["loss"]) << "step " << a[i]["step"];
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, Resume, ::testing::Values(Scheme::pre, Scheme::ngpt),
                         [](const auto& info) { return to_string(info.param); });

TEST(Resume, WithoutResumeFlagStartsOver) {
  TempDir tmp;
  RunSpec spec = small_run(Scheme::post);
  prepare_run(tmp / "run", spec);
  ASSERT_FALSE(run_normlab({"train", (tmp / "run").string(), "--kill-at-step", "25"}).exited);
  const auto again = run_normlab({"train", (tmp / "run").string()});
  ASSERT_TRUE(again.exited && again.exit_code == 0) << again.describe();
  EXPECT_EQ(metrics_lines(tmp / "run" / "metrics.jsonl").size(), 60u);
}

TEST(Divergence, NonFiniteLossStopsTheRunAndKeepsTheLastCheckpoint) {
  TempDir tmp;
  RunSpec spec = small_run(Scheme::pre);
  spec.model.norm = NormKind::none;  // nothing bounds the activations
  spec.train.adam.lr = 1e30;
  spec.train.adam.clip_norm = 0;
  spec.train.warmup = 0;
  spec.train.checkpoint_every = 1;
  prepare_run(tmp / "run", spec);
  const auto r = run_normlab({"train", (tmp / "run").string()});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("loss became"), std::string::npos) << r.err;
  EXPECT_EQ(read_run_status(tmp / "run"), RunStatus::diverged);
  EXPECT_FALSE(std::filesystem::exists(tmp / "run" / "final"));
  // A checkpoint of a finite state is on disk and loads.
  ASSERT_TRUE(std::filesystem::exists(tmp / "run" / "checkpoint" / "model.safetensors"));
  const auto fwd = run_normlab(
      {"forward", "--checkpoint", (tmp / "run" / "checkpoint").string(), "--tokens", "1 2 0"});
  EXPECT_TRUE(fwd.exited && fwd.exit_code == 0) << fwd.describe();
}

}  // namespace
}  // namespace normlab

namespace normlab {
namespace {

TEST(RunLock, SecondTrainerOnTheSameRunIsRefused) {
  testing::TempDir tmp;
  prepare_run(tmp / "run", small_run(Scheme::pre));
  const int fd = ::open((tmp / "run" / ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);  // this test plays the running trainer
  const auto r = testing::run_normlab({"train", (tmp / "run").string()});
  ::close(fd);
  EXPECT_TRUE(r.exited && r.exit_code == 1) << r.describe();
  EXPECT_NE(r.err.find("another process is training this run"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp / "run" / "metrics.jsonl"));
}

}  // namespace
}  // namespace normlab
