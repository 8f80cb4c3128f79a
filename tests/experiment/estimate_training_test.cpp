// The dry run's training estimate: which runs are left, and a step timed once for every
// study that trains it.
#include <gtest/gtest.h>

#include <string>

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
  EXPECT_EQ(rates.size(), 2u);  // pre and post
  const TrainingEstimate tb = estimate_training(b, out / "b", 1, true, {}, &rates);
  EXPECT_EQ(rates.size(), 2u);
  EXPECT_EQ(tb.seconds, ta.seconds);  // the same steps at the rates timed for a
  EXPECT_GT(tb.seconds, 0.0);
  estimate_training(c, out / "c", 1, true, {}, &rates);
  EXPECT_EQ(rates.size(), 4u);

  // Without a shared StepRates each call times its own steps, and `rates` is left alone.
  const StepRates before = rates;
  estimate_training(b, out / "b", 1, true);
  EXPECT_EQ(rates, before);
}

}  // namespace
}  // namespace normlab
