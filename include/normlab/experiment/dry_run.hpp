// `normlab run FILE --dry-run`: what a run would do, without training anything.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "normlab/experiment/experiment.hpp"

namespace normlab {

// Every value of the resolved document (after extends, the tier and --set), one line per
// leaf, "dotted.key = value   # where it was written" (FILE:LINE or --set KEY=VALUE).
std::string resolved_values(const toml::table& doc, const std::string& file);

// "1 h 05 min", "12 min", "40 s".
std::string training_duration(double seconds);

// A training rate as the estimate prints it: whole steps/s from 10 up, two significant digits
// below ("55", "1.3", "0.41"), so that a slow model's rate does not read as 0.
std::string rate_text(double steps_per_s);

// One run of a study as its folder under `out` has it: "to do", "to resume from step S of N",
// "finished" or "diverged", and the training steps it has left.
struct RunState {
  std::filesystem::path dir;
  std::string state;
  int64_t steps_left = 0;
};
RunState run_state(const Variant& v, uint64_t seed, const std::filesystem::path& out);

// Training rates in steps/s, by what sets a step's work: the task, the model, the batch, the
// length and the threads (the learning rate and the seed do not); and the seconds to evaluate
// one sequence, by task, model, length and threads ("eval|..." keys). A ledger's dry run
// shares one across its studies, so that what several studies run is timed once.
using StepRates = std::map<std::string, double>;

// The runs of a study not yet ended under `out` (nor finished in `kept`, the folder of kept
// runs that `normlab run --keep` restores) and, with `measure`, the wall time of their
// training at `jobs` runs at a time, from timed steps of each variant's model on its task at
// the mean training length (a few seconds per step not in `rates`; those timed are added to
// it).
struct TrainingEstimate {
  int runs = 0;        // variants × seeds
  int to_do = 0;       // runs neither finished nor diverged
  int at_once = 1;     // min(jobs, to_do), at least 1
  double seconds = 0;  // 0 without `measure`
  std::string rates;   // "label steps/s, ..." as measured
  // The training left of the run that has the most, at its variant's rate: a run trains on
  // its own `train.threads` whatever `jobs` is, so no run finishes sooner (0 without
  // `measure`). What a batch system's time limit, or a machine that lives a few hours, must
  // hold.
  double longest_run_seconds = 0;
  // The evaluation of the runs to do at `jobs` at a time: each [eval] length's samples at the
  // time of one sequence, timed here (0 without `measure`).
  double eval_seconds = 0;
  // The variance probe of the runs to do at `jobs` at a time: each [probe] length's samples at
  // the time of one sequence through the probe's sweep, timed here (0 without `measure` or
  // without [probe] variance).
  double probe_seconds = 0;
  // The other probes the study runs, not timed: "depth", "dilution", "bridge".
  std::vector<std::string> untimed_probes;
};
TrainingEstimate estimate_training(const Experiment& e, const std::filesystem::path& out, int jobs,
                                   bool measure = true, const std::filesystem::path& kept = {},
                                   StepRates* rates = nullptr);

// "1 h 05 min of training and 12 min of evaluation", with ", ... and 3 min of the variance
// probe" where `variance` (the study runs it).
std::string estimate_amounts(double seconds, double eval_seconds, bool variance,
                             double probe_seconds);

// "the depth probe comes on top", "the depth and bridge probes come on top"; "" for none.
std::string probes_on_top(const std::vector<std::string>& names);

// The report of --dry-run: the resolved values, then each run with its folder under `out`
// and its state there (to do, at step S of N, finished, diverged), then an estimate of the
// training time of the runs to do at `jobs` at a time, from timed steps of each variant's
// model on its task at the mean training length (`estimate` false: no estimate, for tests).
std::string dry_run_report(const toml::table& doc, const Experiment& e,
                           const std::filesystem::path& out, int jobs, bool estimate = true);

}  // namespace normlab
