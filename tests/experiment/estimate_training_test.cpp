// The dry run's estimate: which runs are left, a step, an evaluated sequence and a probed one
// timed once for every study that runs them, and the evaluation's and the probe's time from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "normlab/experiment/dry_run.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

using testing::experiment_error;
using testing::kTinyExperiment;
using testing::TempDir;

// kTinyExperiment with `from` replaced by `to` in its text.
Experiment tiny_with(const std::string& from, const std::string& to) {
  std::string text = kTinyExperiment;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  Experiment e;
  EXPECT_EQ(experiment_error(text, &e), "");
  return e;
}

// The timings in `rates` whose key starts with `prefix` ("eval|", "variance|"): their sum and
// how many there are.
struct Timings {
  double seconds = 0;
  int count = 0;
};
Timings timings_of(const StepRates& rates, const std::string& prefix) {
  Timings t;
  for (const auto& [key, seconds] : rates) {
    if (key.rfind(prefix, 0) != 0) continue;
    t.seconds += seconds;
    ++t.count;
  }
  return t;
}

// Two studies of one task and model (they differ in the learning rate, which does not change
// a step's work) share their timings through one StepRates; a study of another task is timed
// again.
TEST(EstimateTraining, TimesAStepOnceForEveryStudyThatTrainsIt) {
  TempDir out;
  const Experiment a = tiny_with("lr = 0.01", "lr = 0.01");
  const Experiment b = tiny_with("lr = 0.01", "lr = 0.02");
  const Experiment c = tiny_with("v = 6", "v = 8");
  StepRates rates;
  const TrainingEstimate ta = estimate_training(a, out / "a", 1, true, {}, &rates);
  EXPECT_EQ(ta.to_do, 4);
  EXPECT_EQ(rates.size(), 6u);  // pre and post: a step, and a sequence at lengths 2 and 5
  const TrainingEstimate tb = estimate_training(b, out / "b", 1, true, {}, &rates);
  EXPECT_EQ(rates.size(), 6u);
  EXPECT_EQ(tb.seconds, ta.seconds);  // the same steps at the rates timed for a
  EXPECT_GT(tb.seconds, 0.0);
  EXPECT_EQ(tb.eval_seconds, ta.eval_seconds);
  estimate_training(c, out / "c", 1, true, {}, &rates);
  EXPECT_EQ(rates.size(), 12u);

  // Without a shared StepRates each call times its own steps, and `rates` is left alone.
  const StepRates before = rates;
  estimate_training(b, out / "b", 1, true);
  EXPECT_EQ(rates, before);
}

// The evaluation: for each variant's two runs, 32 sequences at each length at the time of one,
// for the one weights; two runs at a time take half as long.
TEST(EstimateTraining, EvaluationIsEachLengthsSamplesAtTheTimeOfOneSequence) {
  TempDir out;
  const Experiment e = tiny_with("lr = 0.01", "lr = 0.01");
  StepRates rates;
  const TrainingEstimate one = estimate_training(e, out / "e", 1, true, {}, &rates);
  const Timings per_sequence = timings_of(rates, "eval|");  // over both variants and both lengths
  EXPECT_EQ(per_sequence.count, 4);
  EXPECT_GT(one.eval_seconds, 0.0);
  EXPECT_NEAR(one.eval_seconds, per_sequence.seconds * 32 * 2, 1e-12 * one.eval_seconds);
  const TrainingEstimate two = estimate_training(e, out / "e", 2, true, {}, &rates);
  EXPECT_DOUBLE_EQ(two.eval_seconds, one.eval_seconds / 2);
  EXPECT_EQ(estimate_training(e, out / "e", 1, false).eval_seconds, 0.0);  // not measured
}

// The variance probe: for each variant's two runs, 16 sequences at each probe length at the
// time of one through the probe's own sweep, timed once per length; the depth probe is named,
// not timed.
TEST(EstimateTraining, VarianceProbeIsEachLengthsSamplesAtTheTimeOfOneSequence) {
  TempDir out;
  const Experiment e = tiny_with(
      "samples = 32\n",
      "samples = 32\n\n[probe]\nvariance = true\nlengths = [2, 5]\nsamples = 16\ndepth = true\n");
  StepRates rates;
  const TrainingEstimate one = estimate_training(e, out / "e", 1, true, {}, &rates);
  const Timings per_sequence =
      timings_of(rates, "variance|");  // over both variants and both probe lengths
  EXPECT_EQ(per_sequence.count, 4);
  EXPECT_GT(one.probe_seconds, 0.0);
  EXPECT_NEAR(one.probe_seconds, per_sequence.seconds * 16 * 2, 1e-12 * one.probe_seconds);
  EXPECT_EQ(one.untimed_probes, std::vector<std::string>{"depth"});
  const TrainingEstimate two = estimate_training(e, out / "e", 2, true, {}, &rates);
  EXPECT_DOUBLE_EQ(two.probe_seconds, one.probe_seconds / 2);

  // A study without [probe] variance has no probe time.
  const Experiment plain = tiny_with("lr = 0.01", "lr = 0.01");
  const TrainingEstimate none = estimate_training(plain, out / "plain", 1, true, {}, &rates);
  EXPECT_EQ(none.probe_seconds, 0.0);
  EXPECT_TRUE(none.untimed_probes.empty());
}

// The longest run: the 40 steps of one run at the slower variant's rate, at any `jobs`.
TEST(EstimateTraining, TheLongestRunIsOneRunsStepsLeftAtItsVariantsRate) {
  TempDir out;
  const Experiment e = tiny_with("lr = 0.01", "lr = 0.01");
  StepRates rates;
  const TrainingEstimate one = estimate_training(e, out / "e", 1, true, {}, &rates);
  double slowest = std::numeric_limits<double>::infinity();  // steps/s of the slower variant
  int steps_timings = 0;
  for (const auto& [key, value] : rates) {
    if (key.rfind("eval|", 0) == 0 || key.rfind("variance|", 0) == 0) continue;
    slowest = std::min(slowest, value);
    ++steps_timings;
  }
  ASSERT_EQ(steps_timings, 2);  // pre and post
  EXPECT_DOUBLE_EQ(one.longest_run_seconds, 40 / slowest);
  const TrainingEstimate two = estimate_training(e, out / "e", 2, true, {}, &rates);
  EXPECT_DOUBLE_EQ(two.longest_run_seconds, one.longest_run_seconds);
  EXPECT_LT(two.longest_run_seconds, one.seconds);  // four runs, one at a time
  EXPECT_EQ(estimate_training(e, out / "e", 1, false).longest_run_seconds, 0.0);  // not measured
}

TEST(EstimateTraining, PrintsASlowRateWithoutRoundingItToZero) {
  EXPECT_EQ(rate_text(54.9), "55");
  EXPECT_EQ(rate_text(10), "10");
  EXPECT_EQ(rate_text(1.26), "1.3");
  EXPECT_EQ(rate_text(0.412), "0.41");
}

TEST(EstimateTraining, NamesTheProbesItDoesNotTime) {
  EXPECT_EQ(probes_on_top({}), "");
  EXPECT_EQ(probes_on_top({"depth"}), "the depth probe comes on top");
  EXPECT_EQ(probes_on_top({"depth", "bridge"}), "the depth and bridge probes come on top");
  EXPECT_EQ(probes_on_top({"depth", "dilution", "bridge"}),
            "the depth, dilution and bridge probes come on top");
  EXPECT_EQ(estimate_amounts(3600, 60, false, 0), "1 h 00 min of training and 1 min of evaluation");
  EXPECT_EQ(estimate_amounts(3600, 60, true, 120),
            "1 h 00 min of training, 1 min of evaluation and 2 min of the variance probe");
}

}  // namespace
}  // namespace normlab
