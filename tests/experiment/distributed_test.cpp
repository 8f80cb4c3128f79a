// Distributed sweeps (docs/cluster.md): mpirun ranks and Slurm array shards give the same store
// as one process; `normlab merge` joins shard stores and names missing shards.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <sqlite3.h>

#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::run_normlab;
using testing::shell_quote;
using testing::TempDir;

// Every result and run of a folder's store, in a fixed order, as CSV.
std::string store_rows(const std::filesystem::path& out) {
  const auto results = run_normlab(
      {"results", out.string(), "--csv", "--sql",
       "SELECT run_hash, variant, seed, weights, length, metric, value, ci_low, ci_high, count "
       "FROM results ORDER BY run_hash, weights, metric, length"});
  const auto runs = run_normlab({"results", out.string(), "--csv", "--sql",
                                 "SELECT hash, variant, seed, status, run_dir FROM runs ORDER BY "
                                 "hash"});
  const auto curves = run_normlab({"results", out.string(), "--csv", "--sql",
                                   "SELECT run_hash, step, train_loss, val_loss FROM curves ORDER "
                                   "BY run_hash, step"});
  EXPECT_EQ(results.exit_code, 0) << results.describe();
  return results.out + runs.out + curves.out;
}

std::string write_tiny(const TempDir& dir) {
  const std::string file = (dir / "tiny.toml").string();
  std::ofstream(file) << testing::kTinyExperiment;
  return file;
}

TEST(Distributed, MpirunGivesTheSameStoreAsOneProcess) {
#ifndef NORMLAB_HAVE_MPI
  GTEST_SKIP() << "built without MPI (-DNORMLAB_MPI=OFF)";
#endif
  TempDir dir;
  const std::string file = write_tiny(dir);
  ASSERT_EQ(run_normlab({"run", file, "--out", (dir / "one").string()}).exit_code, 0);
  const std::string mpi_out = (dir / "mpi").string();
  const std::string command = "mpirun --oversubscribe --allow-run-as-root -n 3 " +
                              shell_quote(NORMLAB_BINARY) + " run " + shell_quote(file) +
                              " --out " + shell_quote(mpi_out) + " >" +
                              shell_quote((dir / "mpi.log").string()) + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << testing::slurp(dir / "mpi.log");
  const std::string log = testing::slurp(dir / "mpi.log");
  EXPECT_NE(log.find("4 runs (4 to do, 0 already done), 1 here and 1 on each of 2 other MPI ranks"),
            std::string::npos)
      << log;
  const std::string one = store_rows(dir / "one");
  EXPECT_NE(one.find("finished"), std::string::npos);
  EXPECT_EQ(store_rows(mpi_out), one);
  // Each run trained once: its metrics hold each step once.
  const std::string metrics =
      testing::slurp(std::filesystem::path(mpi_out) / "runs" / "post__seed2" / "metrics.jsonl");
  EXPECT_EQ(metrics.find("\"step\":40,"), metrics.rfind("\"step\":40,"));
  // Run again: every run is found done, on every rank.
  ASSERT_EQ(std::system(command.c_str()), 0) << testing::slurp(dir / "mpi.log");
  EXPECT_NE(testing::slurp(dir / "mpi.log").find("(0 to do, 4 already done)"), std::string::npos);
  EXPECT_EQ(store_rows(mpi_out), one);
}

TEST(Distributed, SlurmShardsMergeIntoTheSameStore) {
  TempDir dir;
  const std::string file = write_tiny(dir);
  ASSERT_EQ(run_normlab({"run", file, "--out", (dir / "one").string()}).exit_code, 0);
  const std::string out = (dir / "array").string();
  // Tasks 5 and 6 of an array --array=5-6: shards 0 and 1 of 2.
  auto task = [&](int id) {
    return run_normlab({"run", file, "--out", out},
                       {"SLURM_ARRAY_TASK_ID=" + std::to_string(id), "SLURM_ARRAY_TASK_COUNT=2",
                        "SLURM_ARRAY_TASK_MIN=5"});
  };
  const auto first = task(5);
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  EXPECT_NE(first.err.find("(Slurm shard 0 of 2): 2 runs (2 to do"), std::string::npos)
      << first.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "array" / "results-shard-0-of-2.sqlite"));
  // Merging before every shard ran says which shard is missing.
  const auto early = run_normlab({"merge", out});
  EXPECT_EQ(early.exit_code, 1) << early.describe();
  EXPECT_NE(early.err.find("shard(s) 1 of 2 have no store yet"), std::string::npos) << early.err;
  ASSERT_EQ(task(6).exit_code, 0);
  const auto merged = run_normlab({"merge", out});
  ASSERT_EQ(merged.exit_code, 0) << merged.describe();
  EXPECT_NE(merged.out.find("4 runs from 2 of 2 shard stores"), std::string::npos) << merged.out;
  EXPECT_EQ(store_rows(out), store_rows(dir / "one"));
  // Merging twice changes nothing.
  ASSERT_EQ(run_normlab({"merge", out}).exit_code, 0);
  EXPECT_EQ(store_rows(out), store_rows(dir / "one"));
}

// Shards are checked before any is merged: one of another experiment, a damaged one, one
// renamed from another task's and one numbered beyond its array are each refused, naming the
// file, with nothing merged.
TEST(Distributed, ForeignAndDamagedShardsAreRefusedBeforeMerging) {
  TempDir dir;
  const std::string file = write_tiny(dir);
  const std::string out = (dir / "array").string(), other = (dir / "other").string();
  const std::vector<std::string> shard0 = {"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=2"};
  ASSERT_EQ(run_normlab({"run", file, "--out", out}, shard0).exit_code, 0);
  // Shard 1 of the same array shape, but of another experiment (another learning rate).
  ASSERT_EQ(run_normlab({"run", file, "--set", "train.lr=0.02", "--out", other},
                        {"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_COUNT=2"})
                .exit_code,
            0);
  const fs::path foreign = dir / "array" / "results-shard-1-of-2.sqlite";
  fs::copy_file(dir / "other" / "results-shard-1-of-2.sqlite", foreign);
  auto merged = run_normlab({"merge", out});
  EXPECT_EQ(merged.exit_code, 1) << merged.describe();
  EXPECT_EQ(merged.err_lines().size(), 1u) << merged.err;
  EXPECT_NE(merged.err.find(foreign.string() + ": a shard of experiment"), std::string::npos)
      << merged.err;
  EXPECT_FALSE(fs::exists(dir / "array" / "results.sqlite")) << "nothing merged";

  fs::remove(foreign);
  testing::write_bytes(foreign, std::string(4096, 'x'));  // not a store
  merged = run_normlab({"merge", out});
  EXPECT_EQ(merged.exit_code, 1) << merged.describe();
  EXPECT_EQ(merged.err.rfind("normlab: " + foreign.string() + ": ", 0), 0u) << merged.err;
  EXPECT_FALSE(fs::exists(dir / "array" / "results.sqlite"));

  // Shard 0's store renamed as shard 1: its own index says otherwise.
  fs::copy_file(dir / "array" / "results-shard-0-of-2.sqlite", foreign,
                fs::copy_options::overwrite_existing);
  merged = run_normlab({"merge", out});
  EXPECT_EQ(merged.exit_code, 1) << merged.describe();
  EXPECT_NE(merged.err.find(foreign.string() +
                            ": written by array task 0 of 2, but named as task 1 of 2"),
            std::string::npos)
      << merged.err;
  EXPECT_FALSE(fs::exists(dir / "array" / "results.sqlite"));

  fs::remove(foreign);
  fs::copy_file(dir / "array" / "results-shard-0-of-2.sqlite",
                dir / "array" / "results-shard-7-of-2.sqlite");
  merged = run_normlab({"merge", out});
  EXPECT_EQ(merged.exit_code, 1) << merged.describe();
  EXPECT_NE(merged.err.find("shard 7 of an array of 2 tasks cannot be"), std::string::npos)
      << merged.err;
}

// All shards merge in one transaction: shard 1 passes every check but fails while it is
// copied (its result rows name an experiment id its experiments table lacks), after shard 0
// was copied; the folder's store then holds nothing of either.
TEST(Distributed, AShardFailingWhileMergedLeavesNoShardMerged) {
  TempDir dir;
  const std::string file = write_tiny(dir);
  const std::string out = (dir / "array").string();
  for (const char* id : {"0", "1"}) {
    ASSERT_EQ(run_normlab({"run", file, "--out", out},
                          {std::string("SLURM_ARRAY_TASK_ID=") + id, "SLURM_ARRAY_TASK_COUNT=2"})
                  .exit_code,
              0);
  }
  const fs::path shard1 = dir / "array" / "results-shard-1-of-2.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(shard1.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE results SET experiment_id = 99", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const auto merged = run_normlab({"merge", out});
  EXPECT_EQ(merged.exit_code, 1) << merged.describe();
  EXPECT_NE(merged.err.find(shard1.string() + ": rows of experiment id 99"), std::string::npos)
      << merged.err;
  const auto runs =
      run_normlab({"results", out, "--csv", "--sql", "SELECT COUNT(*) AS n FROM runs"});
  ASSERT_EQ(runs.exit_code, 0) << runs.describe();
  EXPECT_EQ(runs.out, "n\n0\n") << "shard 0 was kept after shard 1 failed";
}

TEST(Distributed, BadArraysAndFoldersAreRefused) {
  TempDir dir;
  const std::string file = write_tiny(dir);
  const auto bad = run_normlab({"run", file, "--out", (dir / "x").string()},
                               {"SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_COUNT=2"});
  EXPECT_EQ(bad.exit_code, 2) << bad.describe();
  EXPECT_NE(bad.err.find("Slurm array task 3 (minimum 0) is not one of 2 tasks"), std::string::npos)
      << bad.err;
  const auto none = run_normlab({"merge", dir.path().string()});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("holds no shard stores"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace normlab
