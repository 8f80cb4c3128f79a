// RUN/evaluating.json: where a run's evaluation is while `normlab train` evaluates it (which
// weights, how many of the evaluation lengths are done), for `normlab run`'s live lines. Written
// when the evaluation starts and after each length, removed when it ends; a run that has none
// is training, or done.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace normlab {

struct EvalProgress {
  std::string weights;   // "raw", "ema" or "bema"
  int lengths_done = 0;  // of `lengths`, for these weights
  int lengths = 0;
};

void write_eval_progress(const std::filesystem::path& run_dir, const EvalProgress& p);
void remove_eval_progress(const std::filesystem::path& run_dir);
// None when the file is absent or unreadable (being replaced, or removed meanwhile).
std::optional<EvalProgress> read_eval_progress(const std::filesystem::path& run_dir);

}  // namespace normlab
