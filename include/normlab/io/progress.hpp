// Progress of long work for a person watching a terminal or reading a log: durations, whether
// stderr is a terminal, how often to report, a recent speed, and per-item progress with an ETA.
//
//   ItemProgress p({cost(n) for each length n});
//   for (...) { ...; p.item_done(fmt::format("length {}", n)); }
//   // stderr: "  length 512 done in 2.10 s (5 of 8, ETA 14s)"
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace normlab {

// "42s", "3m05s", "2h10m"; "?" for a negative or non-finite time.
std::string format_duration(double seconds);

// Whether stderr is a terminal (live lines) rather than a file or a pipe (plain lines).
bool stderr_is_terminal();

// Seconds between progress reports: NORMLAB_PROGRESS_SECONDS when set (0: at every chance),
// else 1 on a terminal and 10 otherwise.
double progress_interval(bool terminal);

// The relative cost of a forward pass over T tokens of a width-D model: attention scores grow
// as T²·D, the projections and the MLP as 12·T·D², so cost ∝ T·(T + 12·D).
double forward_cost(int64_t tokens, int64_t width);

// Seconds on a steady clock (for RecentRate and intervals).
double steady_seconds();

// A run's speed over the last `window` seconds, from its step as observed now and then (when a
// progress line is drawn). An average since the start, as metrics.jsonl's steps_per_s, carries
// a pause (a stopped process, a loaded machine) for the rest of the run; this one forgets it
// once the pause is `window` seconds old. A step is timed when first seen: the rate's error is
// about one observation interval over the span measured.
class RecentRate {
 public:
  explicit RecentRate(double window = 60.0) : window_(window) {}
  // `seconds` on a steady clock, nondecreasing; `step` the newest record's.
  void observe(double seconds, int64_t step);
  // Steps per second between the oldest and newest step seen in the window (the newest step
  // seen before it stands in when the window holds one); `fallback` until two are known.
  double steps_per_s(double fallback) const;

 private:
  struct Seen {
    double seconds;
    int64_t step;
  };
  double window_;
  std::vector<Seen> seen_;  // distinct steps, oldest first
};

// One stderr line per finished item with the items done, the total and an ETA. The ETA
// assumes each item takes time in proportion to its cost (e.g. tokens × length for an
// evaluation at one length), measured on the items done so far.
class ItemProgress {
 public:
  explicit ItemProgress(std::vector<double> costs);
  // Prints "  WHAT done in S s (K of N, ETA T)" for the next item.
  void item_done(const std::string& what);
  // The ETA after the items done so far, in seconds (NaN before the first).
  double eta_seconds() const;

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<double> costs_;
  size_t done_ = 0;
  Clock::time_point start_, last_;
};

}  // namespace normlab
