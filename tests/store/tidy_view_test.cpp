// The tidy views (src/store/tidy_view.hpp, docs/store.md "Tidy views"): every swept key and the
// main settings are typed columns of the results, named by their last part unless that name is
// taken; the views follow the stored runs' keys; `normlab export` and `normlab results` read them.
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "normlab/io/csv.hpp"
#include "normlab/store/results_store.hpp"
#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// A run of a sweep over train.lr, train.warmup, model.norm and train.averaging.every.
RunRows swept_run(const std::string& hash, double lr, int64_t warmup) {
  RunRows r;
  r.run.hash = hash;
  r.run.variant = fmt::format("pre lr={} warmup={}", lr, warmup);
  r.run.base_variant = "pre";
  r.run.scheme = "pre";
  r.run.norm = "rmsnorm";
  r.run.seed = 1;
  nlohmann::json values{{"variant", r.run.variant}, {"seed", 1}};
  values["train.lr"] = fmt::format("{}", lr);
  values["train.warmup"] = std::to_string(warmup);
  values["model.norm"] = "rmsnorm";
  values["train.averaging.every"] = "20";
  r.run.values_json = values.dump();
  nlohmann::json config;
  config["task"] = {{"name", "set_complement"}};
  config["model"] = {
      {"layers", 1}, {"width", 15}, {"heads", 1}, {"pos", "none"}, {"norm", "rmsnorm"}};
  config["train"] = {{"steps", 100}, {"batch", 8},       {"lr", lr},
                     {"max_len", 8}, {"warmup", warmup}, {"averaging", {{"every", 20}}}};
  r.run.config_json = config.dump();
  r.run.status = "finished";
  r.run.run_dir = "runs/" + hash;
  r.results.push_back({"raw", "tvd", 4, 5, 100, 0.25, 0.2, 0.3});
  return r;
}

ExperimentRecord sweep_experiment() {
  return {"sweep", "abc", "{}", "0.1.0", "deadbeef", "host", "2026-11-28T00:00:00Z"};
}

TEST(TidyViews, SweptKeysAreTypedColumnsNamedByTheirLastPart) {
  TempDir tmp;
  const auto db = tmp / "results.sqlite";
  {
    ResultsStore store(db);
    const int64_t id = store.begin_experiment(sweep_experiment());
    store.record_run(id, swept_run("h1", 0.003, 100));
    store.record_run(id, swept_run("h2", 0.01, 200));
  }
  const QueryTable t = query_results_store(
      db,
      "SELECT base_variant, task, typeof(lr), lr, typeof(warmup), warmup, width, "
      "\"model.norm\", every, value FROM tidy ORDER BY lr");
  ASSERT_EQ(t.rows.size(), 2u);
  // lr is a main column (REAL, from the run's settings); warmup is swept (INTEGER); model.norm
  // keeps its dotted key because "norm" is a column of results.
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"pre", "set_complement", "real", "0.003",
                                                 "integer", "100", "15", "rmsnorm", "20", "0.25"}));
  EXPECT_EQ(t.rows[1][3], "0.01");
  EXPECT_EQ(t.rows[1][5], "200");
  const QueryTable runs = query_results_store(db, "SELECT COUNT(*), SUM(warmup) FROM tidy_runs");
  EXPECT_EQ(runs.rows[0], (std::vector<std::string>{"2", "300"}));
}

TEST(TidyViews, FollowTheStoredRunsKeys) {
  TempDir tmp;
  const auto db = tmp / "results.sqlite";
  ResultsStore store(db);
  const int64_t id = store.begin_experiment(sweep_experiment());
  RunRows plain = swept_run("h1", 0.003, 100);
  plain.run.values_json = R"({"seed":1,"variant":"pre"})";
  store.record_run(id, plain);
  const auto columns = [&] { return query_results_store(db, "SELECT * FROM tidy").columns; };
  auto has = [](const std::vector<std::string>& c, const char* name) {
    return std::find(c.begin(), c.end(), name) != c.end();
  };
  EXPECT_TRUE(has(columns(), "lr"));  // main settings are always there
  EXPECT_FALSE(has(columns(), "warmup"));
  store.record_run(id, swept_run("h2", 0.01, 200));
  EXPECT_TRUE(has(columns(), "warmup"));
  // Two swept keys that share their last part keep their dotted keys.
  RunRows clash = swept_run("h3", 0.01, 300);
  nlohmann::json values = nlohmann::json::parse(clash.run.values_json);
  values["model.every"] = "2";
  clash.run.values_json = values.dump();
  store.record_run(id, clash);
  EXPECT_TRUE(has(columns(), "train.averaging.every"));
  EXPECT_TRUE(has(columns(), "model.every"));
  EXPECT_FALSE(has(columns(), "every"));
}

TEST(TidyViews, ExportAndResultsOfASweepStudy) {
  TempDir tmp;
  {
    std::ofstream(tmp / "tiny.toml")
        << testing::kTinyExperiment << "\n[sweep]\ntrain.lr = [0.01, 0.02]\n";
  }
  const auto out = tmp / "o";
  const auto run = testing::run_normlab({"run", (tmp / "tiny.toml").string(), "--set", "seeds=[1]",
                                         "--set", "train.steps=10", "--out", out.string()});
  ASSERT_TRUE(run.exited && run.exit_code == 0) << run.describe();
  const auto csv = testing::run_normlab({"export", out.string(), "--csv"});  // tidy by default
  ASSERT_EQ(csv.exit_code, 0) << csv.describe();
  const CsvTable table = parse_csv_table(csv.out, "export --csv");
  const size_t lr = table.column("lr"), base = table.column("base_variant"),
               variant = table.column("variant");
  ASSERT_FALSE(table.rows.empty());
  for (const auto& row : table.rows) {
    EXPECT_TRUE(row[lr] == "0.01" || row[lr] == "0.02") << row[lr];
    EXPECT_EQ(row[variant], row[base] + " lr=" + row[lr]);
  }
  const auto typed = testing::run_normlab(
      {"results", out.string(), "--csv", "--sql",
       "SELECT base_variant, lr, COUNT(DISTINCT run_hash) AS runs FROM tidy WHERE typeof(lr) = "
       "'real' GROUP BY base_variant, lr ORDER BY base_variant, lr"});
  ASSERT_EQ(typed.exit_code, 0) << typed.describe();
  EXPECT_EQ(typed.out, "base_variant,lr,runs\npost,0.01,1\npost,0.02,1\npre,0.01,1\npre,0.02,1\n");
}

}  // namespace
}  // namespace normlab
