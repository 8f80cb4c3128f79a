// SIGINT/SIGTERM as a request to stop (base/interrupts.hpp): a run saves its state at the step
// it was in and is marked interrupted; the study says what was saved and the command that
// resumes; resuming gives the same bits as an uninterrupted study.
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

TEST(Interrupt, AStudyStopsSavesAndResumesWithTheSameBits) {
  TempDir dir;
  const std::string file = (dir / "tiny.toml").string();
  std::ofstream(file) << testing::kTinyExperiment;
  const fs::path whole = dir / "whole", out = dir / "out";
  ASSERT_EQ(run_normlab({"run", file, "--out", whole.string(), "--jobs", "1"}).exit_code, 0);

  // The first run interrupts itself after step 15 (as Ctrl-C would reach it).
  auto r = run_normlab({"run", file, "--out", out.string(), "--jobs", "1"},
                       {"NORMLAB_TEST_INTERRUPT_AT_STEP=15"});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 130) << r.describe();
  EXPECT_NE(r.err.find("normlab: tiny: stopped by an interrupt of a run: 1 run saved where it "
                       "stopped (pre seed 1 at step 15); 0 of 4 runs had ended; the summaries "
                       "are not written; `normlab run " +
                       file + " --out " + out.string() + "` resumes"),
            std::string::npos)
      << r.err;
  EXPECT_NE(testing::slurp(out / "runs" / "pre__seed1" / "run.json").find("\"interrupted\""),
            std::string::npos);
  EXPECT_FALSE(fs::exists(out / "runs" / "pre__seed2" / "metrics.jsonl"));  // not started
  EXPECT_FALSE(fs::exists(out / "results.csv"));

  r = run_normlab({"run", file, "--out", out.string(), "--jobs", "1"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.err.find("(4 to do, 0 already done; resuming pre seed 1 from step 15)"),
            std::string::npos)
      << r.err;
  // The resumed run's lines say where it started from; a run started afresh's do not.
  EXPECT_NE(r.err.find("] started  pre seed 1 (from step 15)\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("] finished pre seed 1 in "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" s (from step 15)\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("] started  post seed 2\n"), std::string::npos) << r.err;
  EXPECT_EQ(testing::slurp(out / "results.csv"), testing::slurp(whole / "results.csv"));
  for (const char* run : {"pre__seed1", "post__seed2"}) {
    EXPECT_EQ(testing::slurp(out / "runs" / run / "final" / "model.safetensors"),
              testing::slurp(whole / "runs" / run / "final" / "model.safetensors"))
        << run;
  }
}

TEST(Interrupt, ATrainedRunStopsAtTheStepItWasIn) {
  TempDir dir;
  const std::string file = (dir / "tiny.toml").string();
  std::ofstream(file) << testing::kTinyExperiment;
  ASSERT_EQ(run_normlab({"run", file, "--out", (dir / "out").string()}).exit_code, 0);
  const fs::path run = dir / "out" / "runs" / "post__seed1";
  fs::remove_all(run / "final");
  fs::remove_all(run / "checkpoint");
  const auto r = run_normlab({"train", run.string(), "--interrupt-at-step", "7"});
  EXPECT_EQ(r.exit_code, 130) << r.describe();
  EXPECT_NE(r.err.find(run.string() +
                       ": stopped by SIGINT after step 7, saved there; `normlab "
                       "train " +
                       run.string() + " --resume` continues it"),
            std::string::npos)
      << r.err;
  EXPECT_NE(testing::slurp(run / "checkpoint" / "state.json").find("\"step\": 7"),
            std::string::npos);
}

}  // namespace
}  // namespace normlab
