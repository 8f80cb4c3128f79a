// `normlab merge`: the shard stores of a Slurm array joined into the folder's store
// (results_store.hpp, docs/cluster.md).
#include <fmt/format.h>

#include "normlab/errors.hpp"
#include "normlab/results_store.hpp"
#include "sqlite_db.hpp"

namespace normlab {

void ResultsStore::check_shard(const std::filesystem::path& shard_file,
                               const std::string& config_hash) {
  const std::string file = shard_file.string();
  try {
    const QueryTable check = query_results_store(shard_file, "PRAGMA quick_check");
    if (check.rows.size() != 1 || check.rows[0].at(0) != "ok") {
      throw InputError(fmt::format("{}: damaged store (quick_check: {})", file,
                                   check.rows.empty() ? "" : check.rows[0].at(0)));
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
  } catch (const InputError& e) {
    const std::string what = e.what();
    // Messages of the store layer already name the file; others get it here.
    throw InputError(what.rfind(file, 0) == 0 ? what : fmt::format("{}: {}", file, what));
  }
}

int64_t ResultsStore::merge_from(const std::filesystem::path& shard_file) {
  if (!std::filesystem::is_regular_file(shard_file)) {
    throw InputError(fmt::format("{}: no such store", shard_file.string()));
  }
  SqliteStatement attach(*db_, "ATTACH DATABASE ? AS shard");
  attach.text(1, shard_file.string()).run();
  int64_t runs = 0;
  db_->exec("BEGIN IMMEDIATE");
  try {
    // Experiments by (name, config_hash): the earliest start, the latest finish.
    db_->exec(
        "INSERT INTO experiments(name, config_hash, config_json, version, git_commit, host, "
        "started_at, finished_at) SELECT name, config_hash, config_json, version, git_commit, "
        "host, started_at, finished_at FROM shard.experiments WHERE true "
        "ON CONFLICT(name, config_hash) DO UPDATE SET "
        "started_at = MIN(experiments.started_at, excluded.started_at), "
        "finished_at = NULLIF(MAX(COALESCE(experiments.finished_at, ''), "
        "COALESCE(excluded.finished_at, '')), '')");
    // Each shard run replaces the same run here whole.
    for (const char* table : {"results", "curves", "probes"}) {
      db_->exec(fmt::format("DELETE FROM main.{} WHERE run_hash IN (SELECT hash FROM shard.runs)",
                            table));
    }
    // The shard's experiment ids become this store's.
    const char* id_here =
        "(SELECT m.id FROM main.experiments m JOIN shard.experiments s ON m.name = s.name AND "
        "m.config_hash = s.config_hash WHERE s.id = {}.experiment_id)";
    db_->exec(fmt::format(
        "INSERT OR REPLACE INTO main.runs SELECT r.hash, {}, r.variant, r.scheme, r.norm, r.seed, "
        "r.values_json, r.status, r.run_dir, r.started_at, r.finished_at, r.seconds "
        "FROM shard.runs r",
        fmt::format(fmt::runtime(id_here), "r")));
    db_->exec(fmt::format(
        "INSERT INTO main.results SELECT x.run_hash, {}, x.variant, x.scheme, x.norm, x.seed, "
        "x.weights, x.length, x.seq_len, x.metric, x.value, x.ci_low, x.ci_high, x.count "
        "FROM shard.results x",
        fmt::format(fmt::runtime(id_here), "x")));
    db_->exec("INSERT INTO main.curves SELECT * FROM shard.curves");
    db_->exec("INSERT INTO main.probes SELECT * FROM shard.probes");
    runs = SqliteStatement(*db_, "SELECT COUNT(*) FROM shard.runs").single_int(0);
    db_->exec("COMMIT");
  } catch (...) {
    db_->rollback();
    sqlite3_exec(db_->handle(), "DETACH DATABASE shard", nullptr, nullptr, nullptr);
    throw;
  }
  db_->exec("DETACH DATABASE shard");
  return runs;
}

}  // namespace normlab
