// The results store: every result of a results folder in one SQLite file, OUT/results.sqlite
// (docs/store.md gives the schema with pandas examples). WAL journal, so readers (pandas, the
// sqlite3 shell, normlab.results) can read while `normlab run` writes.
//
//   experiments(id PK, name, config_hash, config_json, version, git_commit, host,
//               started_at, finished_at)                      UNIQUE(name, config_hash)
//   runs(hash PK, experiment_id, variant, scheme, norm, seed, values_json, status, run_dir,
//        started_at, finished_at, seconds, base_variant, config_json)
//   results(run_hash, experiment_id, variant, scheme, norm, seed, weights, length, seq_len,
//           metric, value, ci_low, ci_high, count)            PK(run_hash, weights, metric, length)
//   curves(run_hash, step, train_loss, val_loss)               PK(run_hash, step)
//   probes(run_hash, probe, format, content)                   PK(run_hash, probe)
//   views tidy_runs, tidy: runs and results with the run's main config fields and every swept
//        key as typed columns (tidy_view.hpp)
//
// A run's rows are replaced in one transaction (record_run), so recording a run again, after
// a resume or a kill at any moment, never duplicates or loses a row. A run folder holds one
// run: recording a run removes the rows of another run recorded earlier for the same folder.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "normlab/train/run_folder.hpp"

namespace normlab {

class SqliteDb;

struct ExperimentRecord {
  std::string name, config_hash, config_json;
  std::string version, git_commit, host, started_at;  // provenance (normlab/store/provenance.hpp)
};

struct RunRecord {
  std::string hash;  // run_hash() of the run's full config
  std::string variant, scheme, norm;
  uint64_t seed = 0;
  std::string values_json;  // {"scheme": ..., "seed": ...}: what varies between the runs
  std::string status, run_dir;
  std::string started_at, finished_at;  // "" when not observed by this store's writer
  double seconds = NAN;                 // wall time of the training process, when observed
  std::string base_variant;        // the variant without its sweep point ("pre" for "pre lr=0.003")
  std::string config_json = "{}";  // run.json without status and label: what the hash covers
};

struct ResultRecord {
  std::string weights, metric;
  int64_t length = 0, seq_len = 0, count = 0;
  double value = NAN, ci_low = NAN, ci_high = NAN;
};

// One probe output file of a run folder, whole: probe is the file name without its extension
// ("probe_depth_blocks"), format "csv" or "json".
struct ProbeRecord {
  std::string probe, format, content;
};

// Everything one run contributes to the store.
struct RunRows {
  RunRecord run;
  std::vector<ResultRecord> results;
  std::vector<CurvePoint> curves;
  std::vector<ProbeRecord> probes;
};

class ResultsStore {
 public:
  // Opens or creates the store. A store of an older layout (normlab before the schema version
  // kSchemaVersion) is derived data: it is removed and rebuilt from the run folders.
  explicit ResultsStore(const std::filesystem::path& file);
  ~ResultsStore();

  static constexpr int kSchemaVersion = 3;

  // The experiment's id; a known (name, config_hash) keeps its first start time and gets the
  // new provenance.
  int64_t begin_experiment(const ExperimentRecord& e);
  void finish_experiment(int64_t id, const std::string& finished_at);
  // Replaces the run's rows in one transaction, and removes those of any other run recorded
  // for the same run_dir (a folder trained again with another config). Timings already stored
  // are kept when the new record has none.
  void record_run(int64_t experiment_id, const RunRows& rows);
  // Removes every run not of experiment `experiment_id` with its results, curves and probes,
  // in one transaction: runs an earlier version of the study recorded (other seeds, another
  // sweep) that the current one does not have. Returns how many runs were removed.
  int64_t keep_only_runs_of(int64_t experiment_id);
  // Records that this store is task `task` of an array of `tasks` (a Slurm shard's store), so
  // that `normlab merge` can check the file's name against it. (store_merge.cpp)
  void mark_shard(int task, int tasks);
  // Copies every experiment, run and row of the shard stores into this one, all in one
  // transaction: after an error nothing of any shard is here. A run already here is replaced
  // whole, so merging twice changes nothing. Returns each shard's run count. (store_merge.cpp)
  std::vector<int64_t> merge_shards(const std::vector<std::filesystem::path>& shards);
  // Checks a shard's store before any is merged: a readable SQLite store that passes
  // quick_check, holding runs of the experiment whose config hash is `config_hash` and of no
  // other, and marked (mark_shard) as task `task` of `tasks`. InputError naming the shard's
  // file otherwise. (store_merge.cpp)
  static void check_shard(const std::filesystem::path& shard_file, const std::string& config_hash,
                          int task, int tasks);

 private:
  std::unique_ptr<SqliteDb> db_;
};

// The result of a read-only query: column names and rows as text ("" for NULL).
struct QueryTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};
// Bounds of a query's cost; 0 is no bound. The user's queries (`normlab results --sql`) get
// both; normlab's own (whole tables for export and reports) none.
struct QueryLimits {
  int64_t max_rows = 0;
  double max_seconds = 0;
};
inline constexpr int64_t kMaxQueryRows = 1000000;
inline constexpr double kQuerySeconds = 60;

// Throws InputError naming the file for a missing store or an invalid query. The store is opened
// read-only; the query must be one statement that only reads (an authorizer allows reading
// tables, functions, recursive queries and the schema-reading pragmas, nothing that attaches,
// writes or copies: VACUUM INTO is refused); beyond a limit of `limits` it stops with an error.
QueryTable query_results_store(const std::filesystem::path& file, const std::string& sql,
                               const QueryLimits& limits = {});

}  // namespace normlab
