// The job scripts of scripts/cluster/ as far as a machine without Slurm allows: their shell
// syntax, and an array's tasks and its finishing job run by hand with the variables Slurm sets,
// passing the tier and a --set through, which must give the store and tables of one process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::run_normlab;
using testing::shell_quote;
using testing::TempDir;

const fs::path kScripts = fs::path(NORMLAB_SOURCE_DIR) / "scripts" / "cluster";

// Runs `bash SCRIPT args` with `env`; returns its exit status and leaves its output in `log`.
int run_script(const std::string& script, const std::vector<std::string>& args,
               const std::string& env, const fs::path& log) {
  std::string command = "env NORMLAB=" + shell_quote(NORMLAB_BINARY) + " " + env + " bash " +
                        shell_quote((kScripts / script).string());
  for (const std::string& a : args) command += " " + shell_quote(a);
  command += " >" + shell_quote(log.string()) + " 2>&1 </dev/null";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ClusterScripts, HaveValidShellSyntax) {
  for (const char* script : {"sweep_array.sbatch", "sweep_finish.sbatch", "sweep_mpi.sbatch"}) {
    const std::string command = "bash -n " + shell_quote((kScripts / script).string());
    EXPECT_EQ(std::system(command.c_str()), 0) << script;
  }
}

// A study with tiers, run as a 2-task array at tier "full" with a --set, then finished.
TEST(ClusterScripts, AnArrayPassesTheTierAndSetsAndMatchesOneProcess) {
  TempDir dir;
  const std::string file = (dir / "tiny.toml").string();
  std::ofstream(file) << testing::kTinyExperiment << "\n[tier.full.train]\nsteps = 50\n"
                      << "[tier.quick.train]\nsteps = 20\n";
  const std::vector<std::string> options = {"--tier", "full", "--set", "eval.samples=16"};
  std::vector<std::string> one_args = {"run", file, "--out", (dir / "one").string()};
  one_args.insert(one_args.end(), options.begin(), options.end());
  ASSERT_EQ(run_normlab(one_args).exit_code, 0);

  const fs::path out = dir / "array";
  std::vector<std::string> args = {file, out.string()};
  args.insert(args.end(), options.begin(), options.end());
  for (int task : {3, 4}) {  // --array=3-4, two CPUs per task
    const std::string env = "SLURM_ARRAY_TASK_ID=" + std::to_string(task) +
                            " SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=3"
                            " SLURM_CPUS_PER_TASK=2";
    const fs::path log = dir / ("task" + std::to_string(task) + ".log");
    ASSERT_EQ(run_script("sweep_array.sbatch", args, env, log), 0) << testing::slurp(log);
    EXPECT_NE(testing::slurp(log).find("2 runs (2 to do, 0 already done), 2 at a time"),
              std::string::npos)
        << testing::slurp(log);
  }
  // The finishing job inherits the array's variables in a dependent job: it drops them.
  const fs::path log = dir / "finish.log";
  ASSERT_EQ(
      run_script("sweep_finish.sbatch", args,
                 "SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=3", log),
      0)
      << testing::slurp(log);
  EXPECT_NE(testing::slurp(log).find("(0 to do, 4 already done)"), std::string::npos)
      << testing::slurp(log);
  EXPECT_EQ(testing::slurp(out / "results.csv"), testing::slurp(dir / "one" / "results.csv"));
  const std::string experiment = testing::slurp(out / "experiment.json");
  EXPECT_NE(experiment.find("\"tier\": \"full\""), std::string::npos) << experiment;
  EXPECT_NE(testing::slurp(out / "runs" / "pre__seed1" / "metrics.jsonl").find("\"step\":50,"),
            std::string::npos);
}

TEST(ClusterScripts, TheMpiJobPassesItsArguments) {
#ifndef NORMLAB_HAVE_MPI
  GTEST_SKIP() << "built without MPI (-DNORMLAB_MPI=OFF)";
#endif
  TempDir dir;
  const std::string file = (dir / "tiny.toml").string();
  std::ofstream(file) << testing::kTinyExperiment;
  const fs::path log = dir / "mpi.log";
  ASSERT_EQ(
      run_script("sweep_mpi.sbatch", {file, (dir / "mpi").string(), "--set", "train.steps=30"},
                 "MPIRUN_ARGS='--oversubscribe --allow-run-as-root -n 2'", log),
      0)
      << testing::slurp(log);
  EXPECT_NE(testing::slurp(log).find("1 here and 1 on each of 1 other MPI ranks"),
            std::string::npos)
      << testing::slurp(log);
  EXPECT_NE(
      testing::slurp(dir / "mpi" / "runs" / "post__seed2" / "metrics.jsonl").find("\"step\":30,"),
      std::string::npos);
}

}  // namespace
}  // namespace normlab
