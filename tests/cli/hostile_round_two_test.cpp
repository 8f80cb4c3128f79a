// Issue 39's seven classes of hostile and careless input, one command-line case per class, run
// as a user would: each under a 2 GB address space with a kill guard
// (testing::kHostileInputLimits), asserting the exit code, one line on stderr with the words
// that say what is wrong, and that nothing in the test's folder outside the output changed (a
// file "outside.txt" and a link "link" to it are there to be harmed).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// The tiny experiment (support/experiment_file.hpp) cut to one seed and 10 steps, plus `extra`.
std::string tiny(const std::string& extra = "") {
  std::string text = testing::kTinyExperiment;
  text.replace(text.find("seeds = [1, 2]"), 14, "seeds = [1]");
  text.replace(text.find("steps = 40"), 10, "steps = 10");
  return text + extra;
}

// Trains the tiny experiment into DIR/NAME (with --set SETS), outside the limits: a setup step.
void run_tiny(const fs::path& dir, const std::string& name, const std::vector<std::string>& sets,
              const std::vector<std::string>& env = {}) {
  std::ofstream(dir / (name + ".toml")) << tiny();
  std::vector<std::string> args = {"run", (dir / (name + ".toml")).string(), "--out",
                                   (dir / name).string()};
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  const auto r = testing::run_normlab(args, env);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
}

// Every entry under `dir` but `skip`, with its type and, for a regular file, its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir, const fs::path& skip) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->path() == skip) {
      it.disable_recursion_pending();
      continue;
    }
    const fs::file_status s = fs::symlink_status(it->path());
    std::string what = std::to_string(static_cast<int>(s.type()));
    if (fs::is_symlink(s)) what += " -> " + fs::read_symlink(it->path()).string();
    if (fs::is_regular_file(s)) what += " " + testing::slurp(it->path());
    out[fs::relative(it->path(), dir).string()] = what;
  }
  return out;
}

struct HostileCase {
  const char* name;
  int issue_class;  // issue 39's numbering
  // Makes what the command needs in DIR; the command's output folder is DIR/out.
  std::function<void(const fs::path& dir)> setup;
  // The command's arguments, DIR substituted for "{}" in each.
  std::vector<std::string> args;
  int exit_code;
  std::vector<std::string> words;  // all on the one line of stderr
};

std::string in_dir(std::string arg, const fs::path& dir) {
  for (size_t at; (at = arg.find("{}")) != std::string::npos;) arg.replace(at, 2, dir.string());
  return arg;
}

const HostileCase kHostileCases[] = {
    {"QuotedDottedSweepKey",
     1,
     [](const fs::path& dir) {
       std::ofstream(dir / "e.toml") << tiny("\n[sweep]\n\"train.lr\" = [0.01, 0.02]\n");
     },
     {"run", "{}/e.toml", "--out", "{}/out"},
     2,
     {"sweep key 'train.lr'", "bare name"}},
    {"ExportToDevNullWritesThrough",
     2,
     [](const fs::path& dir) { run_tiny(dir, "out", {}); },
     {"export", "{}/out", "--csv", "--to", "/dev/null"},
     0,
     {}},
    {"IntegerBeyondTwoToThe53ForAReal",
     3,
     [](const fs::path& dir) { std::ofstream(dir / "e.toml") << tiny(); },
     {"run", "{}/e.toml", "--out", "{}/out", "--set", "train.lr=-9007199254740993"},
     2,
     {"lr", "-9007199254740993"}},
    {"SweepOfAMillionPoints",
     4,
     [](const fs::path& dir) {
       std::string axes = "\n[sweep]\n";
       for (const char* key : {"train.lr", "train.batch", "model.width"}) {
         std::string values;
         for (int i = 1; i <= 100; ++i) values += (i > 1 ? ", " : "") + std::to_string(i);
         axes += std::string(key) + " = [" + values + "]\n";
       }
       std::ofstream(dir / "e.toml") << tiny(axes);
     },
     {"run", "{}/e.toml", "--out", "{}/out"},
     2,
     {"more than 10000 points"}},
    {"ExperimentFileIsADevice",
     4,
     [](const fs::path& dir) { fs::create_symlink("/dev/zero", dir / "e.toml"); },
     {"run", "{}/e.toml", "--out", "{}/out"},
     1,
     {"e.toml", "not a regular file"}},
    {"QueryThatWouldWriteACopy",
     5,
     [](const fs::path& dir) { run_tiny(dir, "out", {}); },
     {"results", "{}/out", "--sql", "VACUUM INTO '{}/copy.sqlite'"},
     1,
     {"the query must only read"}},
    {"ShardOfAnotherExperiment",
     6,
     [](const fs::path& dir) {
       const std::vector<std::string> shard = {"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=2"};
       run_tiny(dir, "out", {}, shard);
       run_tiny(dir, "other", {"train.lr=0.02"}, shard);
       fs::remove(dir / "out" / "results-shard-0-of-2.sqlite");
       fs::copy_file(dir / "other" / "results-shard-0-of-2.sqlite",
                     dir / "out" / "results-shard-0-of-2.sqlite");
     },
     {"merge", "{}/out"},
     1,
     {"results-shard-0-of-2.sqlite", "another results folder"}},
    {"DamagedRunState",
     7,
     [](const fs::path& dir) {
       fs::create_directories(dir / "out");
       std::ofstream(dir / "out" / "run.json") << R"({"status": 5, "model": 1})";
     },
     {"train", "{}/out"},
     1,
     {"run.json", "model config is not a JSON object"}},
};

class HostileRoundTwo : public ::testing::TestWithParam<HostileCase> {};

TEST_P(HostileRoundTwo, RefusedOrDoneInOneLineAndNothingOutsideTheOutputChanges) {
  const HostileCase& c = GetParam();
  TempDir tmp;
  const fs::path dir = tmp.path();
  std::ofstream(dir / "outside.txt") << "outside";
  fs::create_symlink(dir / "outside.txt", dir / "link");
  c.setup(dir);
  const auto before = snapshot(dir, dir / "out");
  std::vector<std::string> args;
  for (const std::string& a : c.args) args.push_back(in_dir(a, dir));
  const auto r = testing::run_normlab(args, {}, testing::kHostileInputLimits);
  ASSERT_TRUE(r.exited) << "class " << c.issue_class << ": " << r.describe();
  EXPECT_EQ(r.exit_code, c.exit_code) << r.describe();
  if (c.exit_code != 0) {
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    for (const std::string& w : c.words) {
      EXPECT_NE(r.err.find(w), std::string::npos) << "lacks '" << w << "': " << r.err;
    }
  }
  EXPECT_EQ(snapshot(dir, dir / "out"), before) << "something outside " << dir / "out"
                                                << " changed";
  struct stat null_stat {};
  ASSERT_EQ(::stat("/dev/null", &null_stat), 0);
  EXPECT_TRUE(S_ISCHR(null_stat.st_mode)) << "/dev/null is no longer a device";
}

INSTANTIATE_TEST_SUITE_P(Classes, HostileRoundTwo, ::testing::ValuesIn(kHostileCases),
                         [](const ::testing::TestParamInfo<HostileCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace normlab
