// `normlab merge`: the shard stores of a Slurm array joined into the folder's store
// (results_store.hpp, docs/cluster.md).
#include <fmt/format.h>

#include <map>

#include "normlab/base/errors.hpp"
#include "normlab/store/results_store.hpp"
#include "sqlite_db.hpp"
#include "tidy_view.hpp"

namespace normlab {
namespace {

// Copies one shard's experiments, runs and rows into `here`, inside the transaction the caller
// holds. Each run of the shard replaces the same run here whole. Returns the shard's run count.
int64_t copy_shard(SqliteDb& here, const std::filesystem::path& file) {
  SqliteDb shard(file, SqliteDb::Mode::read_only);

  // Experiments by (name, config_hash): the earliest start, the latest finish. shard id → id.
  std::map<int64_t, int64_t> id_here;
  SqliteStatement experiments(shard,
                              "SELECT id, name, config_hash, config_json, version, git_commit, "
                              "host, started_at, finished_at FROM experiments");
  SqliteStatement upsert(
      here,
      "INSERT INTO experiments(name, config_hash, config_json, version, git_commit, host, "
      "started_at, finished_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT(name, config_hash) DO UPDATE SET "
      "started_at = MIN(experiments.started_at, excluded.started_at), "
      "finished_at = NULLIF(MAX(COALESCE(experiments.finished_at, ''), "
      "COALESCE(excluded.finished_at, '')), '')");
  SqliteStatement find(here, "SELECT id FROM experiments WHERE name = ? AND config_hash = ?");
  while (experiments.step()) {
    for (int c = 1; c <= 8; ++c) upsert.value(c, experiments, c);
    upsert.run();
    id_here[experiments.column_int(0)] =
        find.value(1, experiments, 1).value(2, experiments, 2).single_int(-1);
  }
  auto experiment_here = [&](int64_t shard_id) {
    const auto it = id_here.find(shard_id);
    if (it == id_here.end()) {
      throw InputError(fmt::format("{}: rows of experiment id {}, which the shard does not hold",
                                   file.string(), shard_id));
    }
    return it->second;
  };

  SqliteStatement runs(shard,
                       "SELECT hash, experiment_id, variant, scheme, norm, seed, values_json, "
                       "status, run_dir, started_at, finished_at, seconds, base_variant, "
                       "config_json FROM runs");
  SqliteStatement put_run(here,
                          "INSERT OR REPLACE INTO runs(hash, experiment_id, variant, scheme, "
                          "norm, seed, values_json, status, run_dir, started_at, finished_at, "
                          "seconds, base_variant, config_json) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, "
                          "?, ?, ?, ?, ?)");
  SqliteStatement clear_results(here, "DELETE FROM results WHERE run_hash = ?");
  SqliteStatement clear_curves(here, "DELETE FROM curves WHERE run_hash = ?");
  SqliteStatement clear_probes(here, "DELETE FROM probes WHERE run_hash = ?");
  int64_t count = 0;
  while (runs.step()) {
    for (SqliteStatement* clear : {&clear_results, &clear_curves, &clear_probes}) {
      clear->value(1, runs, 0).run();
    }
    for (int c = 0; c < 14; ++c) {
      if (c == 1) {
        put_run.integer(2, experiment_here(runs.column_int(1)));
      } else {
        put_run.value(c + 1, runs, c);
      }
    }
    put_run.run();
    ++count;
  }

  SqliteStatement results(shard,
                          "SELECT run_hash, experiment_id, variant, scheme, norm, seed, weights, "
                          "length, seq_len, metric, value, ci_low, ci_high, count FROM results");
  SqliteStatement put_result(
      here,
      "INSERT INTO results(run_hash, experiment_id, variant, scheme, norm, seed, weights, length, "
      "seq_len, metric, value, ci_low, ci_high, count) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  while (results.step()) {
    for (int c = 0; c < 14; ++c) {
      if (c == 1) {
        put_result.integer(2, experiment_here(results.column_int(1)));
      } else {
        put_result.value(c + 1, results, c);
      }
    }
    put_result.run();
  }

  SqliteStatement curves(shard, "SELECT run_hash, step, train_loss, val_loss FROM curves");
  SqliteStatement put_curve(
      here, "INSERT INTO curves(run_hash, step, train_loss, val_loss) VALUES(?, ?, ?, ?)");
  while (curves.step()) {
    for (int c = 0; c < 4; ++c) put_curve.value(c + 1, curves, c);
    put_curve.run();
  }

  SqliteStatement probes(shard, "SELECT run_hash, probe, format, content FROM probes");
  SqliteStatement put_probe(
      here, "INSERT INTO probes(run_hash, probe, format, content) VALUES(?, ?, ?, ?)");
  while (probes.step()) {
    for (int c = 0; c < 4; ++c) put_probe.value(c + 1, probes, c);
    put_probe.run();
  }
  return count;
}

}  // namespace

void ResultsStore::check_shard(const std::filesystem::path& shard_file,
                               const std::string& config_hash, int task, int tasks) {
  const std::string file = shard_file.string();
  try {
    const QueryTable check = query_results_store(shard_file, "PRAGMA quick_check");
    if (check.rows.size() != 1 || check.rows[0].at(0) != "ok") {
      throw InputError(fmt::format("{}: damaged store (quick_check: {})", file,
                                   check.rows.empty() ? "" : check.rows[0].at(0)));
    }
    const QueryTable version = query_results_store(shard_file, "PRAGMA user_version");
    if (version.rows.at(0).at(0) != std::to_string(kSchemaVersion)) {
      throw InputError(fmt::format(
          "{}: a store of layout version {}, this normlab writes version {}; run its array task "
          "again with this normlab",
          file, version.rows.at(0).at(0), kSchemaVersion));
    }
    const QueryTable experiments =
        query_results_store(shard_file, "SELECT DISTINCT e.name, e.config_hash FROM experiments e");
    for (const std::vector<std::string>& row : experiments.rows) {
      if (row.at(1) != config_hash) {
        throw InputError(
            fmt::format("{}: a shard of experiment {} (config {}), not of this folder's "
                        "(config {}); it belongs to another results folder",
                        file, row.at(0), row.at(1), config_hash));
      }
    }
    const QueryTable tables = query_results_store(
        shard_file, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'shard'");
    const QueryTable index = tables.rows.at(0).at(0) == "1"
                                 ? query_results_store(shard_file, "SELECT task, tasks FROM shard")
                                 : QueryTable{};
    if (index.rows.size() != 1) {
      throw InputError(fmt::format(
          "{}: holds no shard index (written by a normlab that did not record it, or renamed "
          "from a store that is not a shard's); run its array task again",
          file));
    }
    if (index.rows[0].at(0) != std::to_string(task) ||
        index.rows[0].at(1) != std::to_string(tasks)) {
      throw InputError(fmt::format(
          "{}: written by array task {} of {}, but named as task {} of {}; it was renamed or "
          "copied from another array",
          file, index.rows[0].at(0), index.rows[0].at(1), task, tasks));
    }
  } catch (const InputError& e) {
    const std::string what = e.what();
    // Messages of the store layer already name the file; others get it here.
    throw InputError(what.rfind(file, 0) == 0 ? what : fmt::format("{}: {}", file, what));
  }
}

std::vector<int64_t> ResultsStore::merge_shards(const std::vector<std::filesystem::path>& shards) {
  std::vector<int64_t> runs;
  db_->exec("BEGIN IMMEDIATE");
  try {
    for (const std::filesystem::path& file : shards) {
      if (!std::filesystem::is_regular_file(file)) {
        throw InputError(fmt::format("{}: no such store", file.string()));
      }
      runs.push_back(copy_shard(*db_, file));
    }
    refresh_tidy_views(*db_);
    db_->exec("COMMIT");
  } catch (...) {
    db_->rollback();
    throw;
  }
  return runs;
}

void ResultsStore::mark_shard(int task, int tasks) {
  db_->exec("BEGIN IMMEDIATE");
  try {
    db_->exec("DELETE FROM shard");
    SqliteStatement(*db_, "INSERT INTO shard(task, tasks) VALUES(?, ?)")
        .integer(1, task)
        .integer(2, tasks)
        .run();
    db_->exec("COMMIT");
  } catch (...) {
    db_->rollback();
    throw;
  }
}

}  // namespace normlab
