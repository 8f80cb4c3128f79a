// What `normlab run` shows while its runs train (docs/experiments.md, "Progress"):
//
//   on a terminal, redrawn in place about once a second:
//     pre seed 1    step  1200/4000  loss 0.5312   41.2 steps/s
//     post seed 1   step   800/4000  loss 0.6120   39.8 steps/s
//     runs 3 of 20 done, 2 training; ETA 12m30s
//
//   otherwise (a log file, a pipe), the same lines every 10 seconds, each block starting with
//   the total line. Lines that stay ("[4/20] finished pre seed 2 in 81.3 s") go through
//   message(), which clears the live block first.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "normlab/eval/eval_progress.hpp"
#include "normlab/experiment/experiment.hpp"

namespace normlab {

// The newest training record of a run's metrics.jsonl (a line with "loss").
struct RunSnapshot {
  int64_t step = 0;  // 0 when the run has no record yet
  double loss = 0;
  double steps_per_s = 0;  // the run's own average since it (re)started
};
RunSnapshot read_run_snapshot(const std::filesystem::path& metrics_file);

struct ActiveRun {
  std::string label;  // "pre seed 1"
  int64_t steps = 0;  // the run's total steps
  RunSnapshot now;
  std::optional<EvalProgress> evaluation;  // set once training ended and evaluation began
  double step_cost = 1;  // the work of one training step (step_cost below), the ETA's weight
};

// The model FLOPs of one training step of `v` at its mean training length (bench/flops.hpp):
// what the ETA weighs a run's steps by, so that a study whose variants differ in depth, width
// or length does not extrapolate its slowest runs from its fastest.
double step_cost(const Variant& v);

// "pre seed 1    step  1200/4000  loss 0.5312   41.2 steps/s" (label padded to `width`); once
// the run evaluates, "pre seed 1    evaluating raw: 12 of 17 lengths done".
std::string format_active_run(const ActiveRun& run, size_t width);

// Seconds until every run is done: the work left (each active run's steps left times its
// step_cost, plus `waiting_work`, the same sum over the runs not started) over the active runs'
// summed work per second (steps/s times step_cost); NaN while no rate is known.
double sweep_eta_seconds(const std::vector<ActiveRun>& active, double waiting_work);

// "runs 3 of 20 done, 2 training; ETA 12m30s", or with runs evaluating "runs 3 of 20 done,
// 1 training, 1 evaluating; training ETA 12m30s" (the ETA counts training steps only).
std::string format_sweep_total(int done, int total, size_t training, size_t evaluating,
                               double eta_seconds);

class SweepProgress {
 public:
  // `terminal`: redraw in place with ANSI escapes; `interval`: seconds between draws.
  SweepProgress(std::FILE* out, bool terminal, double interval);
  // A line that stays; the live block is cleared first and redrawn at the next update.
  void message(const std::string& line);
  // Draws the block if `interval` has passed since the last draw.
  void update(const std::vector<ActiveRun>& active, const std::string& total_line);
  // Clears the live block (at the end).
  void clear();

 private:
  std::FILE* out_;
  bool terminal_;
  double interval_;
  double last_draw_ = -1e300;  // seconds on a steady clock
  int drawn_lines_ = 0;        // lines of the live block now on screen
};

}  // namespace normlab
