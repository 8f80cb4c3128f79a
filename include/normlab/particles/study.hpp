// A particle-dynamics study: one experiment file, several runs (typically one per scheme), a
// results folder and a printed comparison with the paper's predictions. Format in
// docs/particles.md ("Study files").
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace normlab {
class TomlSection;
}

namespace normlab::particles {

// Reads the rest of an experiment file whose `kind` is "particles" (the caller has read `kind`),
// runs every listed scheme, `jobs` runs at a time (0: the file's `jobs`, default 1), writes
// `out_dir` and prints the summary table to stdout; progress goes to stderr.
void run_study(TomlSection& top, const std::filesystem::path& out_dir, int jobs);

// One run of a study: its name (the file stem of its table, summary.json's `name`) and the key
// of its finished-run record, everything its trajectory, fits and scalar check depend on.
struct RunKey {
  std::string name;
  std::string key;
};

// The runs the rest of a study file (`top`, as run_study reads it) would integrate, in order.
std::vector<RunKey> study_run_keys(TomlSection& top);

// Whether `summary` (a finished study's summary.json) holds exactly the runs `keys`, in order,
// each under its key: its tables are those the study would make now. A summary.json written
// before the runs recorded their keys holds none.
bool summary_holds_runs(const nlohmann::json& summary, const std::vector<RunKey>& keys);

}  // namespace normlab::particles
