// Kept runs: a copy of each ended run's own files, without its checkpoints, in a folder that
// outlives the results folder (a repository's docs/, a shared disk). With `normlab run --keep
// DIR` (docs/experiments.md, "Keeping runs"), a run that ended is probed and kept at once, and
// a run that is not in the results folder but is in DIR is restored from it instead of trained
// again, so a study survives the loss of its results folder and its machine.
//
// DIR/<run folder name>/ holds every regular file at the top of OUT/runs/<run>/ except the lock
// and train.log (a log that names the machine's paths): run.json, the evaluation CSV and JSON
// files, metrics.jsonl and the probes' files. run.json is written last, so a copy cut short is
// not a kept run.
#pragma once

#include <filesystem>

namespace normlab {

// Whether `kept` (DIR/<run>) holds a kept run: its run.json.
bool is_kept_run(const std::filesystem::path& kept);

// Copies the run folder `dir`'s own files into `kept` (created), each atomically, run.json
// last.
void keep_run(const std::filesystem::path& dir, const std::filesystem::path& kept);

// Copies the kept run `kept` into the run folder `dir` (created), each file atomically,
// run.json last; the restored run has no checkpoints.
void restore_kept_run(const std::filesystem::path& kept, const std::filesystem::path& dir);

// Reused runs (`normlab run --reuse DIR`): a run that another study trained with the same
// settings — the same run.json but for its label and status, so the same run hash — is copied
// from there instead of trained again: run.json, metrics.jsonl and the evaluation files
// (eval_*.csv, eval_*.json), each atomically, run.json last. Not its probes' files, which
// follow its own study's [probe] table.
void restore_reused_run(const std::filesystem::path& from, const std::filesystem::path& dir);

}  // namespace normlab
