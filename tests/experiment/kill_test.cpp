// kill -9 at random moments (crash_points.hpp), then resume: every run finishes exactly once,
// no store row is lost or duplicated, the store passes PRAGMA integrity_check, and the final
// tables equal an uninterrupted run's. Also an MPI rank killed mid-sweep.
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <random>

#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

using testing::run_normlab;
using testing::TempDir;

// The store's results, runs and curves, in a fixed order, as CSV (timings left out: they
// differ between a killed and an uninterrupted sweep).
std::string tables(const std::filesystem::path& out) {
  std::string all;
  for (const char* sql :
       {"SELECT run_hash, variant, seed, weights, length, metric, value, ci_low, ci_high, count "
        "FROM results ORDER BY run_hash, weights, metric, length",
        "SELECT hash, variant, seed, status, run_dir FROM runs ORDER BY hash",
        "SELECT run_hash, step, train_loss, val_loss FROM curves ORDER BY run_hash, step",
        "SELECT COUNT(*), COUNT(DISTINCT run_hash || weights || metric || length) FROM results"}) {
    const auto r = run_normlab({"results", out.string(), "--csv", "--sql", sql});
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    all += r.out;
  }
  return all;
}

std::string integrity(const std::filesystem::path& out) {
  return run_normlab({"results", out.string(), "--csv", "--sql", "PRAGMA integrity_check"}).out;
}

// The tiny study with checkpoints every 10 steps, so kills land between checkpoints too.
std::string write_study_with_checkpoints(const TempDir& dir) {
  std::string text = testing::kTinyExperiment;
  text.replace(text.find("lr = 0.01"), 9, "lr = 0.01\ncheckpoint_every = 10");
  const std::string file = (dir / "tiny.toml").string();
  std::ofstream(file) << text;
  return file;
}

// Kills `normlab run` twenty times at random crash points, resuming after each; the tables of
// every completed sweep equal an uninterrupted sweep's.
void kill_twenty_times_and_resume() {
  TempDir dir;
  const std::string file = write_study_with_checkpoints(dir);
  ASSERT_EQ(run_normlab({"run", file, "--out", (dir / "whole").string(), "--jobs", "2"}).exit_code,
            0);
  const std::string whole = tables(dir / "whole");
  ASSERT_NE(whole.find("finished"), std::string::npos);

  const std::string out = (dir / "killed").string();
  // Check that a completed sweep equals the uninterrupted one and each run finished once.
  auto check_complete = [&] {
    EXPECT_EQ(integrity(out), "integrity_check\nok\n");
    EXPECT_EQ(tables(out), whole);
    for (const char* run : {"pre__seed1", "pre__seed2", "post__seed1", "post__seed2"}) {
      const std::string metrics =
          testing::slurp(std::filesystem::path(out) / "runs" / run / "metrics.jsonl");
      EXPECT_NE(metrics.find("\"step\":40,"), std::string::npos) << run;
      EXPECT_EQ(metrics.find("\"step\":40,"), metrics.rfind("\"step\":40,")) << run;
    }
  };
  std::mt19937 rng(20261123);  // fixed: the same kill points on every machine
  int kills = 0, sweeps = 0;
  for (int attempt = 0; kills < 20 && attempt < 200; ++attempt) {
    // One of the first crash points the run passes: its spawns, the records and the middle of
    // their store transactions, and its polls while runs train.
    const int at = std::uniform_int_distribution<int>(1, 12)(rng);
    const auto r = run_normlab({"run", file, "--out", out, "--jobs", "2"},
                               {"NORMLAB_TEST_CRASH_AT=" + std::to_string(at)});
    if (!r.exited && r.signal == SIGKILL) {
      ++kills;
      if (std::filesystem::exists(std::filesystem::path(out) / "results.sqlite")) {
        EXPECT_EQ(integrity(out), "integrity_check\nok\n") << "after kill " << kills;
      }
      continue;
    }
    // Not killed: the resumed sweep completed before reaching crash point `at`.
    ASSERT_TRUE(r.exited && r.exit_code == 0) << "attempt " << attempt << ": " << r.describe();
    check_complete();
    ++sweeps;
    std::filesystem::remove_all(out);  // a fresh sweep to kill again
  }
  EXPECT_EQ(kills, 20);
  const auto last = run_normlab({"run", file, "--out", out, "--jobs", "2"});
  ASSERT_TRUE(last.exited && last.exit_code == 0) << last.describe();
  check_complete();
  ::testing::Test::RecordProperty("completed_sweeps", sweeps + 1);
}

TEST(KillAndResume, TwentyKillsAtRandomMomentsChangeNothing) {
  kill_twenty_times_and_resume();
}

// The same where the killed sweep's trainers are reparented to a subreaper (this test process,
// as a CI runner or a container's init may be) instead of to pid 1: a trainer started just
// before the kill must see that its parent is gone, and a resumed sweep must wait for the
// trainers still saving instead of failing their runs.
TEST(KillAndResume, OrphansGoingToASubreaperChangeNothing) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  kill_twenty_times_and_resume();
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
  while (::waitpid(-1, nullptr, 0) > 0) {
  }  // the orphans that ended
}

// An MPI worker rank killed while it trains ends the job (mpirun stops every rank); running the
// same command again completes the sweep with the same tables.
TEST(KillAndResume, AKilledMpiRankLosesOnlyItsRunInFlight) {
#ifndef NORMLAB_HAVE_MPI
  GTEST_SKIP() << "built without MPI (-DNORMLAB_MPI=OFF)";
#endif
  TempDir dir;
  const std::string file = write_study_with_checkpoints(dir);
  ASSERT_EQ(run_normlab({"run", file, "--out", (dir / "whole").string()}).exit_code, 0);
  const std::string out = (dir / "mpi").string();
  auto mpirun = [&](const std::string& env) {
    const std::string command = env + " mpirun --oversubscribe --allow-run-as-root -n 3 " +
                                testing::shell_quote(NORMLAB_BINARY) + " run " +
                                testing::shell_quote(file) + " --out " + testing::shell_quote(out) +
                                " >>" + testing::shell_quote((dir / "mpi.log").string()) + " 2>&1";
    return std::system(command.c_str());
  };
  // Rank 1 dies after it is given its first run (before training it), then after training
  // it (before reporting it); each time mpirun ends every rank.
  int kills = 0;
  for (int at : {1, 2, 1, 2}) {
    const int status =
        mpirun("NORMLAB_TEST_CRASH_RANK=1 NORMLAB_TEST_CRASH_AT=" + std::to_string(at));
    if (status != 0) ++kills;  // else the sweep ended before rank 1 got a run
    if (std::filesystem::exists(std::filesystem::path(out) / "results.sqlite")) {
      EXPECT_EQ(integrity(out), "integrity_check\nok\n");
    }
  }
  EXPECT_GE(kills, 1) << testing::slurp(dir / "mpi.log");
  ASSERT_EQ(mpirun(""), 0) << testing::slurp(dir / "mpi.log");
  EXPECT_EQ(integrity(out), "integrity_check\nok\n");
  EXPECT_EQ(tables(out), tables(dir / "whole"));
}

}  // namespace
}  // namespace normlab
