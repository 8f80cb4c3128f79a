#include "normlab/store/results_store.hpp"

#include <fmt/format.h>

#include <chrono>
#include <set>
#include <string>

#include "normlab/base/errors.hpp"
#include "normlab/io/crash_points.hpp"
#include "sqlite_db.hpp"
#include "tidy_view.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS experiments(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  config_json TEXT NOT NULL,
  version TEXT, git_commit TEXT, host TEXT,
  started_at TEXT, finished_at TEXT,
  UNIQUE(name, config_hash));
CREATE TABLE IF NOT EXISTS runs(
  hash TEXT PRIMARY KEY,
  experiment_id INTEGER NOT NULL REFERENCES experiments(id),
  variant TEXT NOT NULL, scheme TEXT NOT NULL, norm TEXT NOT NULL, seed INTEGER NOT NULL,
  values_json TEXT NOT NULL,
  status TEXT NOT NULL, run_dir TEXT NOT NULL,
  started_at TEXT, finished_at TEXT, seconds REAL,
  base_variant TEXT NOT NULL, config_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results(
  run_hash TEXT NOT NULL REFERENCES runs(hash),
  experiment_id INTEGER NOT NULL REFERENCES experiments(id),
  variant TEXT NOT NULL, scheme TEXT NOT NULL, norm TEXT NOT NULL, seed INTEGER NOT NULL,
  weights TEXT NOT NULL, length INTEGER NOT NULL, seq_len INTEGER NOT NULL,
  metric TEXT NOT NULL, value REAL, ci_low REAL, ci_high REAL, count INTEGER NOT NULL,
  PRIMARY KEY(run_hash, weights, metric, length));
CREATE TABLE IF NOT EXISTS curves(
  run_hash TEXT NOT NULL REFERENCES runs(hash),
  step INTEGER NOT NULL, train_loss REAL, val_loss REAL,
  PRIMARY KEY(run_hash, step));
CREATE TABLE IF NOT EXISTS probes(
  run_hash TEXT NOT NULL REFERENCES runs(hash),
  probe TEXT NOT NULL, format TEXT NOT NULL, content TEXT NOT NULL,
  PRIMARY KEY(run_hash, probe));
CREATE TABLE IF NOT EXISTS shard(task INTEGER NOT NULL, tasks INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS runs_by_experiment ON runs(experiment_id, variant, seed);
CREATE INDEX IF NOT EXISTS results_by_metric ON results(experiment_id, metric, weights, length);
)sql";

int schema_version(SqliteDb& db) {
  return static_cast<int>(SqliteStatement(db, "PRAGMA user_version").single_int(0));
}

bool has_tables(SqliteDb& db) {
  return SqliteStatement(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'")
             .single_int(0) > 0;
}

}  // namespace

ResultsStore::ResultsStore(const fs::path& file) {
  db_ = std::make_unique<SqliteDb>(file, SqliteDb::Mode::read_write_create);
  if (has_tables(*db_) && schema_version(*db_) != kSchemaVersion) {
    // Written by an older normlab (one table set rebuilt on every run): everything in it is
    // in the run folders, so start over.
    db_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(file.string() + suffix);
    db_ = std::make_unique<SqliteDb>(file, SqliteDb::Mode::read_write_create);
  }
  db_->exec("PRAGMA journal_mode = WAL");
  db_->exec("PRAGMA foreign_keys = ON");
  db_->exec(std::string("BEGIN IMMEDIATE;") + kSchema +
            fmt::format("PRAGMA user_version = {};", kSchemaVersion));
  refresh_tidy_views(*db_);
  db_->exec("COMMIT");
}

ResultsStore::~ResultsStore() = default;

int64_t ResultsStore::begin_experiment(const ExperimentRecord& e) {
  SqliteStatement upsert(*db_,
                         "INSERT INTO experiments(name, config_hash, config_json, version, "
                         "git_commit, host, started_at) VALUES(?, ?, ?, ?, ?, ?, ?) "
                         "ON CONFLICT(name, config_hash) DO UPDATE SET version = "
                         "excluded.version, git_commit = excluded.git_commit, host = "
                         "excluded.host, finished_at = NULL");
  upsert.text(1, e.name)
      .text(2, e.config_hash)
      .text(3, e.config_json)
      .text(4, e.version)
      .text(5, e.git_commit)
      .text(6, e.host)
      .text(7, e.started_at)
      .run();
  SqliteStatement id(*db_, "SELECT id FROM experiments WHERE name = ? AND config_hash = ?");
  const int64_t value = id.text(1, e.name).text(2, e.config_hash).single_int(-1);
  if (value < 0) db_->fail("experiment row missing after insert");
  return value;
}

void ResultsStore::finish_experiment(int64_t id, const std::string& finished_at) {
  SqliteStatement st(*db_, "UPDATE experiments SET finished_at = ? WHERE id = ?");
  st.text(1, finished_at).integer(2, id).run();
}

int64_t ResultsStore::keep_only_runs_of(int64_t experiment_id) {
  db_->exec("BEGIN IMMEDIATE");
  try {
    SqliteStatement count(*db_, "SELECT COUNT(*) FROM runs WHERE experiment_id != ?");
    const int64_t removed = count.integer(1, experiment_id).single_int(0);
    for (const char* table : {"results", "curves", "probes"}) {
      SqliteStatement clear(
          *db_, fmt::format("DELETE FROM {} WHERE run_hash IN (SELECT hash FROM runs WHERE "
                            "experiment_id != ?)",
                            table)
                    .c_str());
      clear.integer(1, experiment_id).run();
    }
    SqliteStatement runs(*db_, "DELETE FROM runs WHERE experiment_id != ?");
    runs.integer(1, experiment_id).run();
    refresh_tidy_views(*db_);
    db_->exec("COMMIT");
    return removed;
  } catch (...) {
    db_->exec("ROLLBACK");
    throw;
  }
}

void ResultsStore::record_run(int64_t experiment_id, const RunRows& rows) {
  const RunRecord& r = rows.run;
  auto optional = [](const std::string& s) -> std::optional<std::string> {
    if (s.empty()) return std::nullopt;
    return s;
  };
  db_->exec("BEGIN IMMEDIATE");
  try {
    // A run folder holds one run: an earlier run recorded for the same folder under another
    // hash (the folder was removed and trained again with another config) is gone from disk,
    // so its rows go too, and means over the store never mix the two.
    for (const char* table : {"results", "curves", "probes"}) {
      SqliteStatement clear(
          *db_, fmt::format("DELETE FROM {} WHERE run_hash IN (SELECT hash FROM runs WHERE "
                            "run_dir = ? AND hash != ?)",
                            table)
                    .c_str());
      clear.text(1, r.run_dir).text(2, r.hash).run();
    }
    SqliteStatement superseded(*db_, "DELETE FROM runs WHERE run_dir = ? AND hash != ?");
    superseded.text(1, r.run_dir).text(2, r.hash).run();
    SqliteStatement run(*db_,
                        "INSERT INTO runs(hash, experiment_id, variant, scheme, norm, seed, "
                        "values_json, status, run_dir, started_at, finished_at, seconds, "
                        "base_variant, config_json) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                        "?) ON CONFLICT(hash) DO UPDATE SET experiment_id = "
                        "excluded.experiment_id, status = excluded.status, run_dir = "
                        "excluded.run_dir, values_json = excluded.values_json, variant = "
                        "excluded.variant, base_variant = excluded.base_variant, "
                        "started_at = COALESCE(excluded.started_at, runs.started_at), "
                        "finished_at = COALESCE(excluded.finished_at, runs.finished_at), "
                        "seconds = COALESCE(excluded.seconds, runs.seconds)");
    run.text(1, r.hash)
        .integer(2, experiment_id)
        .text(3, r.variant)
        .text(4, r.scheme)
        .text(5, r.norm)
        .integer(6, static_cast<int64_t>(r.seed))
        .text(7, r.values_json)
        .text(8, r.status)
        .text(9, r.run_dir)
        .optional_text(10, optional(r.started_at))
        .optional_text(11, optional(r.finished_at))
        .real(12, r.seconds)
        .text(13, r.base_variant)
        .text(14, r.config_json)
        .run();
    for (const char* table : {"results", "curves", "probes"}) {
      SqliteStatement clear(*db_, fmt::format("DELETE FROM {} WHERE run_hash = ?", table).c_str());
      clear.text(1, r.hash).run();
    }
    crash_point();  // inside the transaction: the kill tests check nothing of it is kept
    SqliteStatement result(*db_,
                           "INSERT INTO results VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const ResultRecord& x : rows.results) {
      result.text(1, r.hash)
          .integer(2, experiment_id)
          .text(3, r.variant)
          .text(4, r.scheme)
          .text(5, r.norm)
          .integer(6, static_cast<int64_t>(r.seed))
          .text(7, x.weights)
          .integer(8, x.length)
          .integer(9, x.seq_len)
          .text(10, x.metric)
          .real(11, x.value)
          .real(12, x.ci_low)
          .real(13, x.ci_high)
          .integer(14, x.count)
          .run();
    }
    SqliteStatement curve(*db_, "INSERT INTO curves VALUES(?, ?, ?, ?)");
    for (const CurvePoint& p : rows.curves) {
      curve.text(1, r.hash).integer(2, p.step).real(3, p.train_loss).real(4, p.val_loss).run();
    }
    SqliteStatement probe(*db_, "INSERT INTO probes VALUES(?, ?, ?, ?)");
    for (const ProbeRecord& p : rows.probes) {
      probe.text(1, r.hash).text(2, p.probe).text(3, p.format).text(4, p.content).run();
    }
    refresh_tidy_views(*db_);
    db_->exec("COMMIT");
  } catch (...) {
    db_->rollback();
    throw;
  }
}

namespace {

// Reading only: tables, functions, recursive queries, and the pragmas that read the schema or
// check the file. Everything else (ATTACH, writes, other pragmas) is denied at prepare time.
int read_only_authorizer(void*, int action, const char* name, const char* argument, const char*,
                         const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_PRAGMA: {
      static const std::set<std::string> reading = {
          "integrity_check", "quick_check", "table_info", "table_xinfo",
          "table_list",      "index_list",  "index_info", "foreign_key_list"};
      // These set their value when given one; without, they read it.
      static const std::set<std::string> values = {"user_version",   "schema_version",
                                                   "application_id", "page_count",
                                                   "page_size",      "encoding"};
      if (name == nullptr) return SQLITE_DENY;
      const bool allowed = reading.count(name) > 0 || (values.count(name) > 0 && !argument);
      return allowed ? SQLITE_OK : SQLITE_DENY;
    }
    default:
      return SQLITE_DENY;
  }
}

// The progress handler's deadline: a non-zero return interrupts the statement.
int past_deadline(void* deadline) {
  return std::chrono::steady_clock::now() >
         *static_cast<std::chrono::steady_clock::time_point*>(deadline);
}

}  // namespace

QueryTable query_results_store(const fs::path& file, const std::string& sql,
                               const QueryLimits& limits) {
  if (!fs::is_regular_file(file)) {
    throw InputError(fmt::format("{}: no results store (has `normlab run` written this folder?)",
                                 file.string()));
  }
  SqliteDb db(file, SqliteDb::Mode::read_only);
  sqlite3_set_authorizer(db.handle(), read_only_authorizer, nullptr);
  // One statement: after it only spaces and comments, which prepare to no statement.
  const char* tail = nullptr;
  sqlite3_stmt* first = nullptr;
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &first, &tail) != SQLITE_OK) {
    db.fail("cannot prepare the statement");
  }
  const bool reads_only = first != nullptr && sqlite3_stmt_readonly(first) != 0;
  sqlite3_finalize(first);
  bool more = false;
  if (tail != nullptr && *tail != '\0') {
    sqlite3_stmt* second = nullptr;
    more = sqlite3_prepare_v2(db.handle(), tail, -1, &second, nullptr) != SQLITE_OK ||
           second != nullptr;
    sqlite3_finalize(second);
  }
  if (more) {
    throw InputError(
        fmt::format("{}: one statement per query (found more after the first)", file.string()));
  }
  if (!reads_only) {
    throw InputError(fmt::format("{}: the query must only read (SELECT, or a pragma that reads)",
                                 file.string()));
  }
  std::chrono::steady_clock::time_point deadline;
  if (limits.max_seconds > 0) {
    deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(limits.max_seconds));
    sqlite3_progress_handler(db.handle(), 10000, past_deadline, &deadline);
  }
  QueryTable t;
  SqliteStatement st(db, sql.c_str());
  for (int c = 0; c < st.columns(); ++c) t.columns.push_back(st.column_name(c));
  try {
    while (st.step()) {
      if (limits.max_rows > 0 && static_cast<int64_t>(t.rows.size()) >= limits.max_rows) {
        throw InputError(fmt::format(
            "{}: the query returns more than {} rows; narrow it (WHERE, GROUP BY, LIMIT)",
            file.string(), limits.max_rows));
      }
      std::vector<std::string> row;
      for (int c = 0; c < st.columns(); ++c) row.push_back(st.column_text(c).value_or(""));
      t.rows.push_back(std::move(row));
    }
  } catch (const InputError&) {
    if (limits.max_seconds > 0 && past_deadline(&deadline)) {
      throw InputError(fmt::format("{}: the query ran longer than {:g} s and was stopped",
                                   file.string(), limits.max_seconds));
    }
    throw;
  }
  return t;
}

}  // namespace normlab
