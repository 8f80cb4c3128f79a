// The results store (docs/store.md): a run recorded again replaces its rows (no duplicate, no
// loss), timings survive a record without them, an older store is rebuilt, queries are
// read-only; CSV fields are quoted; `normlab results`, `export` and `--version` work.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/kernels/gemm.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/core/machine.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/store/results_store.hpp"
#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

RunRows sample_run(const std::string& hash, int results) {
  RunRows r;
  r.run.hash = hash;
  r.run.variant = "pre";
  r.run.scheme = "pre";
  r.run.norm = "rmsnorm";
  r.run.seed = 1;
  r.run.values_json = "{}";
  r.run.status = "finished";
  r.run.run_dir = "runs/pre__seed1";
  for (int i = 0; i < results; ++i) {
    r.results.push_back({"raw", "tvd", 2 + i, 3 + i, 100, 0.5, 0.4, 0.6});
  }
  r.curves = {{0, NAN, 2.0}, {50, 1.5, NAN}};
  r.probes = {{"probe_depth", "csv", "a,b\n1,2\n"}};
  return r;
}

int64_t count(const std::filesystem::path& db, const std::string& sql) {
  const QueryTable t = query_results_store(db, sql);
  return std::stoll(t.rows.at(0).at(0));
}

ExperimentRecord sample_experiment() {
  return {"tiny", "abc", "{}", "0.1.0", "deadbeef", "host", "2026-11-23T00:00:00Z"};
}

TEST(ResultsStore, RecordingARunAgainReplacesItsRows) {
  TempDir tmp;
  const auto db = tmp / "results.sqlite";
  {
    ResultsStore store(db);
    const int64_t id = store.begin_experiment(sample_experiment());
    RunRows run = sample_run("h1", 3);
    run.run.seconds = 12.5;
    run.run.started_at = "2026-11-23T00:00:01Z";
    store.record_run(id, run);
    RunRows other = sample_run("h2", 2);
    other.run.run_dir = "runs/pre__seed2";
    store.record_run(id, other);
    // Again, after a resume: fewer results now, and no timings in the new record.
    store.record_run(id, sample_run("h1", 1));
    EXPECT_EQ(store.begin_experiment(sample_experiment()), id);  // same (name, config hash)
  }
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM runs"), 2);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM results WHERE run_hash = 'h1'"), 1);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM results WHERE run_hash = 'h2'"), 2);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM curves"), 4);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM probes"), 2);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM experiments"), 1);
  EXPECT_EQ(query_results_store(db, "SELECT seconds FROM runs WHERE hash = 'h1'").rows[0][0],
            "12.5");  // kept
  EXPECT_EQ(query_results_store(db, "PRAGMA integrity_check").rows[0][0], "ok");
  {  // The journal mode, read outside normlab's query path (which refuses pragmas that can set).
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
    sqlite3_finalize(st);
    sqlite3_close(h);
  }
  // NaN is stored as NULL, read back as an empty cell.
  EXPECT_EQ(query_results_store(db, "SELECT train_loss FROM curves WHERE step = 0").rows[0][0], "");
}

// A folder removed and trained again with another config (another run hash): the store keeps
// only the run the folder holds now, so means over the store do not mix the two.
TEST(ResultsStore, ARunFolderTrainedAgainReplacesTheEarlierRun) {
  TempDir tmp;
  const auto db = tmp / "results.sqlite";
  {
    ResultsStore store(db);
    const int64_t id = store.begin_experiment(sample_experiment());
    store.record_run(id, sample_run("old", 3));
    RunRows other = sample_run("neighbour", 2);
    other.run.run_dir = "runs/pre__seed2";
    store.record_run(id, other);
    store.record_run(id, sample_run("new", 1));  // same folder as "old"
  }
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM runs"), 2);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM runs WHERE hash = 'old'"), 0);
  for (const char* table : {"results", "curves", "probes"}) {
    EXPECT_EQ(count(db, fmt::format("SELECT COUNT(*) FROM {} WHERE run_hash = 'old'", table)), 0)
        << table;
  }
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM results WHERE run_hash = 'new'"), 1);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM results WHERE run_hash = 'neighbour'"), 2);
}

TEST(ResultsStore, QueriesCannotWrite) {
  TempDir tmp;
  const auto db = tmp / "results.sqlite";
  {
    ResultsStore store(db);
    store.record_run(store.begin_experiment(sample_experiment()), sample_run("h1", 1));
  }
  EXPECT_THROW(query_results_store(db, "DELETE FROM runs"), InputError);
  EXPECT_THROW(query_results_store(db, "SELEC 1"), InputError);
  EXPECT_THROW(query_results_store(tmp / "none.sqlite", "SELECT 1"), InputError);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM runs"), 1);
}

// A user's query reads and nothing else: one statement, no copy of the store (VACUUM INTO), no
// attached file, no writing pragma; it stops at its row and time limits.
TEST(ResultsStore, AQueryReadsOneStatementWithinItsLimits) {
  TempDir tmp;
  const auto db = tmp / "results.sqlite";
  {
    ResultsStore store(db);
    store.record_run(store.begin_experiment(sample_experiment()), sample_run("h1", 1));
  }
  auto error = [&](const std::string& sql, const QueryLimits& limits = {}) -> std::string {
    try {
      query_results_store(db, sql, limits);
      return "";
    } catch (const InputError& e) {
      return std::string(e.what()).substr(db.string().size());
    }
  };
  EXPECT_EQ(error("VACUUM INTO '" + (tmp / "copy.sqlite").string() + "'"),
            ": the query must only read (SELECT, or a pragma that reads)");
  EXPECT_FALSE(fs::exists(tmp / "copy.sqlite"));
  EXPECT_EQ(error("SELECT 1; DROP TABLE runs"),
            ": one statement per query (found more after the first)");
  EXPECT_EQ(error("SELECT 1; SELECT 2"), ": one statement per query (found more after the first)");
  EXPECT_EQ(error("ATTACH '" + (tmp / "x.sqlite").string() + "' AS x"),
            ": sqlite cannot prepare the statement: not authorized");
  EXPECT_FALSE(fs::exists(tmp / "x.sqlite"));
  EXPECT_EQ(error("PRAGMA user_version = 3"),
            ": sqlite cannot prepare the statement: not authorized");
  EXPECT_EQ(error("SELECT 1; -- a comment"), "");
  EXPECT_EQ(query_results_store(db, "PRAGMA integrity_check").rows.at(0).at(0), "ok");
  const std::string endless =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT ";
  EXPECT_EQ(error(endless + "x FROM c", {1000, 0}),
            ": the query returns more than 1000 rows; narrow it (WHERE, GROUP BY, LIMIT)");
  // No row ever comes: the time limit stops it (a bound on the test's run time, not an assert
  // on timing).
  EXPECT_EQ(error(endless + "COUNT(*) FROM c", {0, 0.5}),
            ": the query ran longer than 0.5 s and was stopped");
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM runs"), 1);
}

TEST(ResultsStore, AnOlderLayoutIsRebuilt) {
  TempDir tmp;
  const auto db = tmp / "results.sqlite";
  {  // The layout of normlab before the schema version: rebuilt from scratch on every run.
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h,
                           "CREATE TABLE experiment(name TEXT, config_json TEXT);"
                           "CREATE TABLE runs(variant TEXT, scheme TEXT, norm TEXT, seed INTEGER,"
                           " status TEXT, run_dir TEXT); INSERT INTO runs VALUES('x','x','x',1,"
                           "'finished','d');",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(h);
  }
  {
    ResultsStore store(db);
    store.record_run(store.begin_experiment(sample_experiment()), sample_run("h1", 1));
  }
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(count(db, "PRAGMA user_version"), ResultsStore::kSchemaVersion);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'experiment'"), 0);
}

TEST(ResultsCommand, SummaryQueryAndExportOfARealStudy) {
  TempDir tmp;
  { std::ofstream(tmp / "tiny.toml") << testing::kTinyExperiment; }
  const auto out = tmp / "o";
  // 30 steps with validation every 10: four validation losses per run.
  const std::vector<std::string> run_args = {"run",   (tmp / "tiny.toml").string(),
                                             "--set", "name=\"tiny_store\"",
                                             "--set", "train.steps=30",
                                             "--set", "train.eval_every=10",
                                             "--out", out.string()};
  const auto run = testing::run_normlab(run_args);
  ASSERT_TRUE(run.exited && run.exit_code == 0) << run.describe();
  const auto db = out / "results.sqlite";
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM runs WHERE status = 'finished'"), 4);
  // runs × lengths × metrics (tvd, accuracy and the evaluator's tvd_chance row)
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM results"), 4 * 2 * 3);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM curves WHERE val_loss IS NOT NULL"), 4 * 4);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM runs WHERE seconds > 0 AND started_at != ''"), 4);
  EXPECT_EQ(count(db, "SELECT COUNT(DISTINCT hash) FROM runs"), 4);
  // Running again (all done) leaves every count as it was.
  const auto again = testing::run_normlab(run_args);
  ASSERT_TRUE(again.exited && again.exit_code == 0) << again.describe();
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM results"), 24);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM experiments"), 1);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM experiments WHERE finished_at IS NOT NULL"), 1);

  const auto summary = testing::run_normlab({"results", out.string()});
  ASSERT_EQ(summary.exit_code, 0) << summary.describe();
  EXPECT_NE(summary.out.find("experiment tiny_store"), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("runs: 4 finished"), std::string::npos) << summary.out;
  const auto query = testing::run_normlab(
      {"results", out.string(), "--csv", "--sql",
       "SELECT variant, COUNT(*) AS n FROM results GROUP BY variant ORDER BY variant"});
  ASSERT_EQ(query.exit_code, 0) << query.describe();
  EXPECT_EQ(query.out, "variant,n\npost,12\npre,12\n");
  const auto bad = testing::run_normlab({"results", out.string(), "--sql", "DROP TABLE runs"});
  EXPECT_EQ(bad.exit_code, 1) << bad.describe();
  EXPECT_EQ(bad.err_lines().size(), 1u);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM runs"), 4);

  const auto csv = testing::run_normlab({"export", out.string(), "--csv", "--table", "runs"});
  ASSERT_EQ(csv.exit_code, 0) << csv.describe();
  EXPECT_EQ(parse_csv_table(csv.out, "export --csv").rows.size(), 4u) << csv.out;
  const auto json = testing::run_normlab({"export", out.string(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.describe();
  EXPECT_EQ(nlohmann::json::parse(json.out).size(), 24u);
  const auto neither = testing::run_normlab({"export", out.string()});
  EXPECT_EQ(neither.exit_code, 2) << neither.describe();
}

// The store holds any bytes (a query can make them); JSON is UTF-8: each invalid byte is
// printed as U+FFFD, not an error.
TEST(ResultsCommand, JsonOfTextThatIsNotUtf8) {
  TempDir tmp;
  {
    ResultsStore store(tmp / "results.sqlite");
    store.record_run(store.begin_experiment(sample_experiment()), sample_run("h1", 1));
  }
  const auto query = testing::run_normlab(
      {"results", tmp.path().string(), "--json", "--sql", "SELECT CAST(x'ff' AS TEXT) AS v"});
  ASSERT_EQ(query.exit_code, 0) << query.describe();
  EXPECT_EQ(nlohmann::json::parse(query.out), nlohmann::json::parse("[{\"v\": \"\\ufffd\"}]"));
}

TEST(VersionCommand, VersionFlagAndSubcommandAgree) {
  const auto flag = testing::run_normlab({"--version"});
  const auto sub = testing::run_normlab({"version"});
  ASSERT_EQ(flag.exit_code, 0) << flag.describe();
  EXPECT_EQ(flag.out, sub.out);
  EXPECT_EQ(flag.out.rfind("normlab 0.1.0", 0), 0u) << flag.out;
  // The CPU and the kernels in use (normlab/core/machine.hpp), one line each.
  const MachineInfo m = machine_info();
#if defined(__x86_64__) || defined(__i386__)
  EXPECT_NE(flag.out.find("\ncpu: " + m.cpu + " (family "), std::string::npos) << flag.out;
#else
  EXPECT_NE(flag.out.find("\ncpu: " + m.cpu + " ("), std::string::npos) << flag.out;
#endif
  EXPECT_NE(flag.out.find("\nproducts: normlab's own, " + gemm_kernel_description()),
            std::string::npos)
      << flag.out;
  EXPECT_NE(flag.out.find("\nopenblas: "), std::string::npos) << flag.out;
  EXPECT_EQ(flag.err, "") << flag.describe();
}

}  // namespace
}  // namespace normlab
