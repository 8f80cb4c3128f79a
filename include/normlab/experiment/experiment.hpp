// Training experiments: an experiment file (TOML) names a task, a model, the schemes to
// compare, seeds, and training and evaluation settings; `normlab run FILE.toml` trains every
// (scheme, seed), evaluates each, and writes a results folder (docs/experiments.md):
//
//   OUT/experiment.json      the resolved experiment (every default filled in)
//   OUT/runs/VARIANT__seedS/ one run directory each (trainer.hpp), with eval_WEIGHTS.csv/json
//   OUT/results.csv          one row per scheme, seed, weights, length, metric
//   OUT/summary.csv, .md     mean ± 95% CI across seeds per scheme, weights, length, metric
//   OUT/curves.csv, .png     training and validation loss against the step (every run)
//
// Runs execute as child processes (`normlab train RUN --resume`), `jobs` at a time; running
// the same file again skips finished runs and resumes interrupted ones.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "normlab/eval/evaluator.hpp"
#include "normlab/model/model_config.hpp"
#include "normlab/train/train_config.hpp"

namespace normlab {

class TomlSection;
class Task;

// One compared configuration: "scheme[(k)][/norm]", e.g. "post_attn/standardize", "mix(2)".
struct Variant {
  std::string label;       // as written in the file (with its sweep values, sweep.hpp)
  std::string base_label;  // the label without its sweep values ("pre" for "pre lr=0.003")
  std::string slug;        // file-system safe form of the label
  ModelConfig model;       // the full model of this variant
  TrainConfig train;       // how it is trained (the experiment's, or its sweep point's)
  // The sweep values of this variant, (dotted key, value as in the label); empty without
  // [sweep].
  std::vector<std::pair<std::string, std::string>> point;
};

struct Experiment {
  std::string name;
  std::string file;
  nlohmann::json task;  // {"name": ..., params}
  std::vector<Variant> variants;
  std::vector<uint64_t> seeds;
  TrainConfig train;  // the file's (with [sweep]: its first point's); each variant has its own
  std::vector<std::string> sweep_keys;  // the dotted keys of [sweep], if any
  EvalConfig eval;
  std::vector<std::string> weights = {"raw"};  // raw, ema, bema
  int jobs = 1;
  // [probe] depth = true: after training, the depth probe (docs/probes.md) on each run's
  // final raw weights, on `probe_batch` validation sequences of task length `probe_length`
  // (0: the longest training length).
  bool probe_depth = false;
  int64_t probe_batch = 32;
  int64_t probe_length = 0;
  // How the file was specialized on the command line (experiment/overrides.hpp): the tier
  // applied ("" when the file has none) and the --set assignments, in order.
  std::string tier;
  std::vector<std::string> sets;
  // [probe] variance = true: after training, the variance probe on each run's final raw
  // weights with the task's inputs, at task lengths `probe_lengths` (default
  // default_probe_lengths), `probe_samples` sequences each (features_report).
  bool probe_variance = false;
  std::vector<int64_t> probe_lengths;
  int64_t probe_samples = 256;
  // [probe] dilution = true (set_complement only): the dilution probe on each run's final raw
  // weights, every input size, `probe_samples` sequences each (dilution_report).
  bool probe_dilution = false;
  // [probe] bridge = true: the particle ODE on each run's own attention (docs/particles.md,
  // "Bridge to trained models") on the depth probe's validation batch (bridge_report).
  bool probe_bridge = false;
};

// Parses "scheme[(k)][/norm]" onto `base`; throws UsageError saying what is allowed.
Variant parse_variant(const std::string& text, const ModelConfig& base);

// Reads a kind = "train" experiment strictly: unknown keys and wrong types are errors with
// the file, the line and the key. Every variant, length and setting is validated here,
// before anything runs.
Experiment read_experiment(TomlSection& top, const std::string& file);

nlohmann::json to_json(const Experiment& e);

// An experiment.json an older normlab wrote, as this one writes the same experiment: each
// model and training config (the top one and every variant's) read as checkpoints are, its
// optional fields that did not exist then at their defaults. Configs that do not read are
// left as written, so the comparison that follows finds them different.
nlohmann::json experiment_json_as_read(nlohmann::json j);

// The [probe] keys of the length probes — variance, lengths, samples, dilution — read into `e`
// (after its variants) and validated before anything runs: every length against the task's
// range and each variant's model (validate_variance), dilution only for set_complement.
// UsageError with the file, the line and the key. (src/experiment/probe_settings.cpp)
void read_probe_settings(TomlSection& probe, const Task& task, Experiment& e);

// The resolved [probe] section: depth, batch, length, variance, lengths, samples, dilution.
nlohmann::json probe_settings_json(const Experiment& e);

// The default lengths of [probe] variance: the powers of two 1 .. 2^14 the task accepts, and
// the task's longest length when it is below 2^14.
std::vector<int64_t> default_probe_lengths(const Task& task);

// This process's share of a study's runs: those whose index in the study's run list (variants,
// then seeds) modulo `count` is `index` (docs/cluster.md). {0, 1}: every run.
struct Shard {
  int index = 0;
  int count = 1;
};

// The shard of a Slurm array task: SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN of
// SLURM_ARRAY_TASK_COUNT; {0, 1} outside an array. UsageError for inconsistent variables.
Shard shard_from_environment();

// OUT/results.sqlite, or OUT/results-shard-K-of-N.sqlite for a shard (`normlab merge`).
std::filesystem::path results_store_file(const std::filesystem::path& out, const Shard& shard);

class MpiComm;

// Takes the results folder's lock (OUT/.lock; OUT/.lock-shard-K for a shard) for the rest of
// the process; InputError at once when another normlab process holds it.
void lock_results_folder(const std::filesystem::path& out, const Shard& shard);

struct StudyOptions {
  std::filesystem::path out;      // results folder
  std::filesystem::path program;  // the normlab binary, for child processes
  int jobs = 0;                   // overrides the file's jobs when > 0
  Shard shard;                    // a Slurm array task's share of the runs
  MpiComm* mpi = nullptr;         // under mpirun: the ranks (this is rank 0)
  std::filesystem::path keep;     // kept runs (kept_runs.hpp); empty: none
  // Folders of other studies' runs (a results folder's runs/, or kept runs): a run that ended
  // there with this run's settings is restored from it instead of trained (kept_runs.hpp,
  // restore_reused_run). Not for a study with a [probe] table, whose probes need weights.
  std::vector<std::filesystem::path> reuse;
  // Restore the runs kept in `keep` that the folder lacks and train nothing: the other runs
  // stay to do (`normlab run --only-kept`).
  bool only_kept = false;
};

// Runs (or resumes) the experiment, or this shard of it; under MPI, as rank 0: trains `jobs`
// runs at a time itself and hands runs to the other ranks, recording every run's rows in the
// store as it ends. Returns the number of runs that did not finish.
int run_experiment(const Experiment& e, const StudyOptions& options);

// An MPI rank other than 0: asks rank 0 for runs, trains each, sends back its rows, until rank
// 0 says there are none left.
void run_experiment_worker(const Experiment& e, const StudyOptions& options);

// Reads every run's evaluation files and writes results.csv and the summaries; returns the
// summary table.
std::string collect_results(const Experiment& e, const std::filesystem::path& out);

// Reads every run's metrics.jsonl and writes OUT/curves.csv (variant, seed, step, train_loss,
// val_loss; one row per step with either, empty cells for the missing one) and, if any run has
// validation losses ([train] eval_every), OUT/curves.png: validation loss against step, one
// line per variant (the mean over seeds, at the steps every seed has). Returns whether the
// plot was written.
bool write_curves(const Experiment& e, const std::filesystem::path& out);

// OUT/runs/SLUG__seedS: the run directory of one variant and seed.
std::filesystem::path run_directory(const std::filesystem::path& out, const Variant& v,
                                    uint64_t seed);

// With [probe] depth: runs the depth probe on every finished run that has no
// RUN/probe_depth.csv yet, then writes OUT/depth.csv (per variant, seed and stream position),
// OUT/depth_layers.csv (per variant, seed and layer: gradient norm of the layer's parameters)
// and plots of hidden-state RMS, gradient norm and mean token cosine against depth; returns a
// short table (empty without [probe] depth), which it also appends to OUT/summary.md.
std::string depth_report(const Experiment& e, const std::filesystem::path& out);

// With [probe] variance: runs the variance probe (task inputs, raw weights) on every finished
// run that has no RUN/probe_variance_task.csv yet, then writes OUT/features.csv (per variant,
// seed, layer, site and length), OUT/features_fit.csv (per variant, seed, layer, site: the
// log-log slope of the global std against N with its 95% interval, and the mean drift) and
// OUT/features_std.png, features_mean.png, features_hist.png; returns a short table (empty
// without [probe] variance), also appended to OUT/summary.md. (features_report.cpp)
std::string features_report(const Experiment& e, const std::filesystem::path& out);

// With [probe] dilution: runs the dilution probe on every finished run that has no
// RUN/probe_dilution.csv yet, then writes OUT/dilution.csv (per variant, seed, site and size
// s), OUT/dilution_fit.csv (per variant, seed and site: the slope of ln|gap| against ln s)
// and OUT/dilution.png; returns a short table, also appended to OUT/summary.md.
// (dilution_report.cpp)
std::string dilution_report(const Experiment& e, const std::filesystem::path& out);

// With [probe] bridge: the particle bridge on every finished run whose scheme has a particle
// law (others are named as skipped) that has no RUN/probe_bridge.csv yet, then OUT/bridge.csv
// (variant, seed, layer, predicted_cos, measured_cos) and OUT/bridge_cosine.png; returns a
// short table, also appended to OUT/summary.md. (bridge_report.cpp)
std::string bridge_report(const Experiment& e, const std::filesystem::path& out);

// Each probe on one finished run that has no files of that probe yet (the files its report
// reads; the report calls the same function for every run). ensure_bridge_probe skips a scheme
// without a particle law.
void ensure_depth_probe(const Experiment& e, const Variant& v, uint64_t seed,
                        const std::filesystem::path& dir);
void ensure_variance_probe(const Experiment& e, const Variant& v, uint64_t seed,
                           const std::filesystem::path& dir);
void ensure_dilution_probe(const Experiment& e, const Variant& v, uint64_t seed,
                           const std::filesystem::path& dir);
void ensure_bridge_probe(const Experiment& e, const Variant& v, uint64_t seed,
                         const std::filesystem::path& dir);

// Every probe the experiment's [probe] table turns on, on one finished run (the ensure_*
// functions above): afterwards the run folder holds every file its reports read except its
// checkpoints. (run_probes.cpp)
void probe_finished_run(const Experiment& e, const Variant& v, uint64_t seed,
                        const std::filesystem::path& dir);

}  // namespace normlab
