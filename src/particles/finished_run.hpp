// A finished particle run kept on disk (OUT/runs/<name>.json) so that a study run again reuses
// it instead of integrating again, as `normlab run` does for training runs. Internal to the
// particle study (docs/particles.md, "Study files").
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "normlab/particles/config.hpp"
#include "normlab/particles/fits.hpp"
#include "normlab/particles/simulation.hpp"

namespace normlab::particles {

// What a finished run depends on: the config (describe()), the contents of any init/qkv file,
// the extra recording time, and whether and over which fit window the scalar reduction was
// compared. Two runs with the same key integrate the same trajectory.
std::string finished_run_key(const ParticlesConfig& c, const FitOptions& fit, double early_t,
                             bool scalar_check);

struct FinishedRun {
  Trajectory trajectory;                 // rows and stats; final_state is not kept
  double seconds = 0;                    // wall time of the original run
  double scalar_max_diff = -1;           // as in the study's run result; −1: not compared
  double scalar_max_rel_diff_tail = -1;  // ditto
};

// Writes `run` under `key` to `path` atomically (full double precision).
void save_finished_run(const std::filesystem::path& path, const std::string& key,
                       const FinishedRun& run);

// The run saved at `path` if the file exists, parses and was saved under `key`; otherwise
// nothing and `why` says why not (empty when the file does not exist).
std::optional<FinishedRun> load_finished_run(const std::filesystem::path& path,
                                             const std::string& key, std::string& why);

}  // namespace normlab::particles
