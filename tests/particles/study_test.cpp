// A small study through `normlab run`: the results folder and the printed table.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/particles/study.hpp"
#include "particles/test_util.hpp"

namespace normlab::particles {
namespace {

using testing::fresh_dir;
using testing::run_cli;

TEST(Study, WritesResultsAndComparesWithPredictions) {
  const std::filesystem::path dir = fresh_dir("study");
  const std::string file = (dir / "tiny.toml").string();
  write_file_atomic(file, R"(kind = "particles"
title = "tiny"
runs = ["post", "slow_pre"]
[defaults]
init = "symmetric"
n = 8
d = 8
beta = 2.0
dt = 0.05
record_every = 0.5
[run.post]
t_end = 10.0
[run.slow_pre]
scheme = "pre"
r0 = 2.0
t_end = 20.0
fit_from = 5.0
)");
  const std::filesystem::path out = dir / "out";
  const auto r = run_cli("run " + file + " --out " + out.string(), "NORMLAB_GNUPLOT=/nonexistent");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("slow_pre"), std::string::npos);
  EXPECT_NE(r.output.find("scalar reduction check"), std::string::npos);
  // Without gnuplot: one warning line, no plots, the rest written.
  EXPECT_NE(r.output.find("normlab: warning: gnuplot not found"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(out / "mean_cos.png"));
  EXPECT_TRUE(std::filesystem::exists(out / "post.csv"));
  EXPECT_TRUE(std::filesystem::exists(out / "slow_pre.csv"));
  EXPECT_TRUE(std::filesystem::exists(out / "summary.csv"));
  std::ifstream in(out / "summary.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["runs"].size(), 2u);
  const auto& pre = j["runs"][1];
  EXPECT_EQ(pre["scheme"], "pre");
  const double v0 = pre["initial_velocity"], predicted = pre["predicted_initial_velocity"];
  EXPECT_NEAR(v0 / predicted, 1.0, 1e-10);
  EXPECT_NEAR(predicted, 2.0 / (2.0 * (std::exp(2.0) + 7.0)), 1e-12);
  EXPECT_EQ(pre["fit"]["t_from"], 5.0);
  EXPECT_GT(pre["mean_angle_moved_by_early_t"].get<double>(), 0.0);
  EXPECT_LT(pre["scalar_reduction_max_abs_diff_mean_cos"].get<double>(), 1e-6);
  std::filesystem::remove_all(dir);
}

// A study run again reuses its finished runs (OUT/runs/<name>.json) and gives the same
// summary; a run whose settings changed, or whose record is damaged, is integrated again.
TEST(Study, FinishedRunsAreReused) {
  const std::filesystem::path dir = fresh_dir("study_reuse");
  const std::string file = (dir / "tiny.toml").string();
  const std::string text = R"(kind = "particles"
runs = ["post", "pre"]
[defaults]
init = "symmetric"
n = 8
d = 8
dt = 0.05
record_every = 0.5
t_end = 6.0
[run.post]
beta = 2.0
[run.pre]
r0 = 2.0
)";
  write_file_atomic(file, text);
  const std::filesystem::path out = dir / "out";
  const std::string command = "run " + file + " --out " + out.string();
  const auto first = run_cli(command, "NORMLAB_GNUPLOT=/nonexistent");
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_EQ(first.output.find("finished earlier"), std::string::npos) << first.output;
  const std::string summary = read_file(out / "summary.csv");
  const std::string post_rows = read_file(out / "post.csv");

  const auto again = run_cli(command, "NORMLAB_GNUPLOT=/nonexistent");
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("post: finished earlier"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("pre: finished earlier"), std::string::npos) << again.output;
  EXPECT_EQ(read_file(out / "summary.csv"), summary);

  // Changed settings for pre (the last table), a damaged record for post: both integrated again.
  write_file_atomic(file, text + "beta = 3.0\n");
  write_file_atomic(out / "runs" / "post.json", "{ not json");
  const auto changed = run_cli(command, "NORMLAB_GNUPLOT=/nonexistent");
  ASSERT_EQ(changed.code, 0) << changed.output;
  EXPECT_NE(changed.output.find("pre: not reusing"), std::string::npos) << changed.output;
  EXPECT_NE(changed.output.find("settings differ"), std::string::npos) << changed.output;
  EXPECT_NE(changed.output.find("post: not reusing"), std::string::npos) << changed.output;
  EXPECT_NE(changed.output.find("cannot be read"), std::string::npos) << changed.output;
  EXPECT_EQ(read_file(out / "post.csv"), post_rows);
  EXPECT_NE(read_file(out / "summary.csv"), summary);
  std::filesystem::remove_all(dir);
}

// Runs integrated two or three at a time (the file's `jobs`, or --jobs) give the same files as
// one at a time: every run's CSV byte for byte, the summary but for its `seconds` column.
TEST(Study, RunsAtATimeGiveTheSameResults) {
  const std::filesystem::path dir = fresh_dir("study_jobs");
  const std::string body = R"(runs = ["post", "pre", "peri", "ngpt", "mix"]
[defaults]
init = "random"
qkv = "kaiming"
qkv_depth = "per_layer"
n = 8
d = 8
beta = 2.0
seed = 3
dt = 0.05
record_every = 0.5
t_end = 8.0
[run.ngpt]
alpha = 1.0
[run.mix]
tau = 2.0
)";
  const std::string one = (dir / "one.toml").string();
  const std::string two = (dir / "two.toml").string();
  write_file_atomic(one, "kind = \"particles\"\n" + body);
  write_file_atomic(two, "kind = \"particles\"\njobs = 2\n" + body);
  struct Case {
    std::string file, flags, folder;
    int at_a_time;  // 0: one at a time, no "at a time" line
  };
  const std::vector<Case> cases{
      {one, "--jobs 1", "out1", 0}, {two, "", "out2", 2}, {one, "--jobs 3", "out3", 3}};
  // summary.csv's rows without its `seconds` column, which is wall time.
  auto summary_without_seconds = [](const std::filesystem::path& file) {
    CsvTable t = read_csv_table(file);
    const size_t seconds = t.column("seconds");
    for (std::vector<std::string>& row : t.rows) row.erase(row.begin() + seconds);
    return t.rows;
  };
  for (const Case& c : cases) {
    const auto r = run_cli("run " + c.file + " " + c.flags + " --out " + (dir / c.folder).string(),
                           "NORMLAB_GNUPLOT=/nonexistent");
    ASSERT_EQ(r.code, 0) << r.output;
    const std::string line = fmt::format("5 run(s) to integrate, {} at a time", c.at_a_time);
    EXPECT_EQ(r.output.find(line) != std::string::npos, c.at_a_time > 0) << r.output;
  }
  const auto summary = summary_without_seconds(dir / "out1" / "summary.csv");
  for (const Case& c : cases) {
    EXPECT_EQ(summary_without_seconds(dir / c.folder / "summary.csv"), summary) << c.folder;
    for (const char* run : {"post", "pre", "peri", "ngpt", "mix"}) {
      const std::string csv = std::string(run) + ".csv";
      EXPECT_EQ(read_file(dir / c.folder / csv), read_file(dir / "out1" / csv)) << c.folder << csv;
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(Study, BadRunIsNamed) {
  const std::filesystem::path dir = fresh_dir("study_bad");
  const std::string file = (dir / "bad.toml").string();
  write_file_atomic(file, "kind = \"particles\"\nruns = [\"post\"]\n[run.post]\nbeta = -1.0\n");
  const auto r = run_cli("run " + file + " --out " + (dir / "out").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("run 'post': --beta must be a finite number > 0, got -1"),
            std::string::npos)
      << r.output;
  std::filesystem::remove_all(dir);
}

// A summary holds a study's runs when it lists the same names in the same order, each under the
// same key; anything else (another key, order or count, no keys) is another study.
TEST(Study, SummaryHoldsRunsOnlyWithEveryNameAndKey) {
  const std::vector<RunKey> keys = {{"post", "beta = 2\n"}, {"pre", "beta = 2\nr0 = 2\n"}};
  const nlohmann::json summary = {{"runs",
                                   {{{"name", "post"}, {"key", "beta = 2\n"}},
                                    {{"name", "pre"}, {"key", "beta = 2\nr0 = 2\n"}}}}};
  EXPECT_TRUE(summary_holds_runs(summary, keys));
  nlohmann::json other_key = summary;
  other_key["runs"][1]["key"] = "beta = 3\nr0 = 2\n";
  EXPECT_FALSE(summary_holds_runs(other_key, keys));
  const std::vector<RunKey> swapped = {keys[1], keys[0]};
  EXPECT_FALSE(summary_holds_runs(summary, swapped));
  EXPECT_FALSE(summary_holds_runs(summary, {keys[0]}));
  nlohmann::json no_keys = summary;
  for (nlohmann::json& run : no_keys["runs"]) run.erase("key");
  EXPECT_FALSE(summary_holds_runs(no_keys, keys));
  EXPECT_FALSE(summary_holds_runs(nlohmann::json::object(), keys));
}

}  // namespace
}  // namespace normlab::particles
