// Progress of long work (progress.hpp, sweep_progress.hpp): the lines, the ETA arithmetic, the
// live block's redraw, and what `normlab run` and `normlab eval` print.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>

#include "normlab/experiment/sweep_progress.hpp"
#include "normlab/io/progress.hpp"
#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

using testing::TempDir;

std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  for (int c; (c = std::fgetc(f)) != EOF;) out.push_back(static_cast<char>(c));
  return out;
}

TEST(Progress, Durations) {
  EXPECT_EQ(format_duration(42.4), "42s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(7800), "2h10m");
  EXPECT_EQ(format_duration(NAN), "?");
  EXPECT_EQ(format_duration(-1), "?");
}

TEST(Progress, ForwardCostGrowsQuadraticallyOnlyBeyondTheWidth) {
  EXPECT_DOUBLE_EQ(forward_cost(10, 5), 10.0 * 70.0);
  // Doubling a short input about doubles the cost; doubling a long one about quadruples it.
  EXPECT_NEAR(forward_cost(20, 64) / forward_cost(10, 64), 2.0, 0.05);
  EXPECT_NEAR(forward_cost(1 << 16, 64) / forward_cost(1 << 15, 64), 4.0, 0.05);
}

TEST(SweepProgress, EtaWeighsEachRunByItsStepCost) {
  // Two shallow runs (cost 1) train at 200 steps/s each, 400 work/s. Left: 500 steps of each
  // (1000 work) and a waiting run of 1000 steps at cost 8 (8000 work): 22.5 s. Counting steps
  // alone would give (1000 + 1000) / 400 = 5 s, eight times too short for the deep run.
  const std::vector<ActiveRun> shallow{{"L=2 seed 1", 1000, {500, 0.5, 200.0}, std::nullopt, 1.0},
                                       {"L=2 seed 2", 1000, {500, 0.5, 200.0}, std::nullopt, 1.0}};
  EXPECT_DOUBLE_EQ(sweep_eta_seconds(shallow, 1000 * 8.0), 22.5);
  // A deep run training at cost 8 and 25 steps/s (200 work/s) beside a shallow one at 200 steps/s
  // (200 work/s): (500 · 8 + 500 · 1) work at 400 work/s.
  const std::vector<ActiveRun> mixed{{"L=16 seed 1", 1000, {500, 0.5, 25.0}, std::nullopt, 8.0},
                                     {"L=2 seed 1", 1000, {500, 0.5, 200.0}, std::nullopt, 1.0}};
  EXPECT_DOUBLE_EQ(sweep_eta_seconds(mixed, 0), 11.25);
}

TEST(SweepProgress, StepCostGrowsWithTheLayers) {
  // Layers add the same work each (flops.hpp: per-layer products, 12 FLOPs per parameter), so
  // the cost is affine in the layers; and deeper is dearer.
  auto cost = [](int layers) {
    Variant v;
    v.model.layers = layers;
    v.model.width = 64;
    v.model.heads = 4;
    v.model.vocab = 10;
    v.train.batch = 32;
    v.train.min_len = 1;
    v.train.max_len = 40;
    return step_cost(v);
  };
  EXPECT_GT(cost(2), 0.0);
  EXPECT_NEAR(cost(16) - cost(2), 14 * (cost(3) - cost(2)), 1e-9 * cost(16));
  EXPECT_GT(cost(3) - cost(2), 0.0);
}

TEST(SweepProgress, SnapshotIsTheNewestCompleteRecord) {
  TempDir dir;
  const auto file = dir / "metrics.jsonl";
  EXPECT_EQ(read_run_snapshot(file).step, 0);  // no file yet
  std::ofstream(file) << "{\"step\":0,\"val_loss\":2.0}\n"
                      << "{\"step\":50,\"loss\":1.5,\"steps_per_s\":40.0}\n"
                      << "{\"step\":100,\"loss\":1.25,\"steps_per_s\":42.5}\n"
                      << "{\"step\":100,\"val_loss\":1.3}\n"
                      << "{\"step\":150,\"loss\":1.0,\"ste";  // being written
  const RunSnapshot s = read_run_snapshot(file);
  EXPECT_EQ(s.step, 100);
  EXPECT_DOUBLE_EQ(s.loss, 1.25);
  EXPECT_DOUBLE_EQ(s.steps_per_s, 42.5);
}

TEST(SweepProgress, EtaIsStepsLeftOverTheSummedRate) {
  std::vector<ActiveRun> active{{"pre seed 1", 1000, {400, 0.5, 20.0}, std::nullopt},
                                {"post seed 1", 1000, {900, 0.6, 30.0}, std::nullopt}};
  // (600 + 100 + 2000 waiting) steps at 50 steps/s (every step_cost 1).
  EXPECT_DOUBLE_EQ(sweep_eta_seconds(active, 2000), 54.0);
  EXPECT_TRUE(std::isnan(sweep_eta_seconds({{"a", 10, {}, std::nullopt}}, 0)));  // no rate yet
  EXPECT_EQ(sweep_eta_seconds({}, 0), 0.0);
  EXPECT_EQ(format_sweep_total(3, 20, 2, 0, 750), "runs 3 of 20 done, 2 training; ETA 12m30s");
  EXPECT_EQ(format_sweep_total(0, 4, 2, 0, NAN), "runs 0 of 4 done, 2 training; ETA -");
  EXPECT_EQ(format_sweep_total(4, 20, 1, 1, 750),
            "runs 4 of 20 done, 1 training, 1 evaluating; training ETA 12m30s");
  EXPECT_EQ(format_active_run(active[0], 11),
            "pre seed 1   step  400/1000  loss 0.5000    20.0 steps/s");
  EXPECT_EQ(format_active_run({"x", 10, {}, std::nullopt}, 3), "x    starting");
  const ActiveRun evaluating{"pre seed 1", 1000, {1000, 0.1, 20.0}, EvalProgress{"raw", 12, 17}};
  EXPECT_EQ(format_active_run(evaluating, 11),
            "pre seed 1   evaluating raw: 12 of 17 lengths done");
}

// RUN/evaluating.json as `normlab train` writes it, and nothing while it is absent or torn.
TEST(SweepProgress, EvaluationProgressIsReadBack) {
  TempDir dir;
  EXPECT_FALSE(read_eval_progress(dir.path()).has_value());
  write_eval_progress(dir.path(), {"ema", 3, 17});
  const std::optional<EvalProgress> p = read_eval_progress(dir.path());
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->weights, "ema");
  EXPECT_EQ(p->lengths_done, 3);
  EXPECT_EQ(p->lengths, 17);
  std::ofstream(dir / "evaluating.json") << "{\"weights\":\"raw\",\"lengths_d";
  EXPECT_FALSE(read_eval_progress(dir.path()).has_value());
  remove_eval_progress(dir.path());
  EXPECT_FALSE(std::filesystem::exists(dir / "evaluating.json"));
}

TEST(Progress, RecentRateIsTheSpeedOverTheLastWindow) {
  RecentRate rate(60.0);
  EXPECT_DOUBLE_EQ(rate.steps_per_s(7.0), 7.0);  // nothing seen yet: the record's average
  rate.observe(0, 0);
  EXPECT_DOUBLE_EQ(rate.steps_per_s(7.0), 7.0);  // one step seen
  rate.observe(1, 50);
  rate.observe(2, 100);
  rate.observe(2.5, 100);  // the same record read again: timed when first seen
  EXPECT_DOUBLE_EQ(rate.steps_per_s(7.0), 50.0);
  // Stopped for 998 s, then 50 steps/s again: the pause counts until it is a window old.
  for (int k = 0; k <= 70; ++k) {
    rate.observe(1000 + k, 150 + 50 * k);
    if (k == 1) {
      EXPECT_LT(rate.steps_per_s(7.0), 1.0);  // (200 − 100) / (1001 − 2)
    }
  }
  EXPECT_DOUBLE_EQ(rate.steps_per_s(7.0), 50.0);  // (3650 − 600) / (1070 − 1009)
  // A run that started again from an earlier step forgets the steps it had shown.
  rate.observe(1071, 40);
  EXPECT_DOUBLE_EQ(rate.steps_per_s(7.0), 7.0);
  // Records farther apart than the window: the two newest still give the rate.
  RecentRate slow(60.0);
  slow.observe(0, 0);
  slow.observe(300, 50);
  slow.observe(600, 100);
  EXPECT_DOUBLE_EQ(slow.steps_per_s(7.0), 50.0 / 300.0);
}

TEST(SweepProgress, PlainOutputPrintsBlocksAndMessages) {
  std::FILE* f = std::tmpfile();
  SweepProgress p(f, false, 0.0);
  p.update({{"pre seed 1", 100, {50, 0.25, 10.0}, std::nullopt}},
           "runs 0 of 2 done, 1 training; ETA 15s");
  p.message("[1/2] finished post seed 1 in 3.0 s");
  p.clear();  // nothing to clear in a log
  EXPECT_EQ(contents(f),
            "runs 0 of 2 done, 1 training; ETA 15s\n"
            "  pre seed 1  step  50/100  loss 0.2500    10.0 steps/s\n"
            "[1/2] finished post seed 1 in 3.0 s\n");
  std::fclose(f);
}

TEST(SweepProgress, TerminalOutputRedrawsInPlace) {
  std::FILE* f = std::tmpfile();
  SweepProgress p(f, true, 0.0);
  const std::vector<ActiveRun> two{{"a", 10, {}, std::nullopt}, {"b", 10, {}, std::nullopt}};
  p.update(two, "total");
  p.update(two, "total");  // moves up 3 lines and erases before drawing again
  p.message("done a");
  EXPECT_EQ(contents(f),
            "  a  starting\n  b  starting\ntotal\n"
            "\x1b[3F\x1b[J  a  starting\n  b  starting\ntotal\n"
            "\x1b[3F\x1b[Jdone a\n");
  std::fclose(f);
}

// `normlab run` into a log: the total line and each active run's line appear (reported at
// every chance with NORMLAB_PROGRESS_SECONDS=0), and the lines that stay.
TEST(SweepProgress, RunPrintsLiveLinesIntoALog) {
  TempDir dir;
  const std::string file = (dir / "tiny.toml").string();
  std::ofstream(file) << testing::kTinyExperiment;
  const testing::RunResult r =
      testing::run_normlab({"run", file, "--out", (dir / "out").string(), "--jobs", "2"},
                           {"NORMLAB_PROGRESS_SECONDS=0"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  // How many runs have finished and how many train at the first report depends on the
  // scheduler (under load the first run can end before the second starts), so any count.
  EXPECT_TRUE(std::regex_search(r.err, std::regex("runs [0-3] of 4 done, [12] training; ETA ")))
      << r.err;
  EXPECT_NE(r.err.find("\n  pre seed 1  "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("] finished post seed 2 in "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\x1b["), std::string::npos) << "no escapes in a log";
}

// On a terminal (a pseudo-terminal from script(1)) the block is redrawn with escapes.
TEST(SweepProgress, RunRedrawsOnATerminal) {
  TempDir dir;
  const std::string file = (dir / "tiny.toml").string();
  std::ofstream(file) << testing::kTinyExperiment;
  const std::string command = "NORMLAB_PROGRESS_SECONDS=0 " + testing::shell_quote(NORMLAB_BINARY) +
                              " run " + testing::shell_quote(file) + " --out " +
                              testing::shell_quote((dir / "out").string());
  const std::string log = (dir / "typescript").string();
  const int status = std::system(("script -qec " + testing::shell_quote(command) + " " +
                                  testing::shell_quote(log) + " >/dev/null 2>&1 </dev/null")
                                     .c_str());
  ASSERT_EQ(status, 0);
  const std::string screen = testing::slurp(log);
  EXPECT_NE(screen.find("\x1b[J"), std::string::npos) << screen;
  EXPECT_NE(screen.find("runs 0 of 4 done, 1 training"), std::string::npos) << screen;
  EXPECT_NE(screen.find("[4/4] finished"), std::string::npos) << screen;
}

}  // namespace
}  // namespace normlab
