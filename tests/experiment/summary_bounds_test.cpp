// The summaries' intervals across seeds stay within each metric's range (metric_bounds): with
// two seeds the Student-t half-width is 12.7 standard errors and would pass 0 and 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "normlab/experiment/experiment.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/tasks/metrics.hpp"
#include "normlab/train/trainer.hpp"
#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

TEST(MetricBounds, ByName) {
  EXPECT_EQ(metric_bounds("accuracy").high, 1.0);
  EXPECT_EQ(metric_bounds("tvd").low, 0.0);
  EXPECT_EQ(metric_bounds("roc_auc").high, 1.0);
  EXPECT_EQ(metric_bounds("loss").low, 0.0);
  EXPECT_TRUE(std::isinf(metric_bounds("loss").high));
  EXPECT_TRUE(std::isinf(metric_bounds("something_else").low));
}

TEST(Summary, IntervalsAcrossTwoSeedsStayWithinTheMetricsRange) {
  testing::TempDir dir;
  Experiment e;
  ASSERT_EQ(testing::experiment_error(testing::kTinyExperiment, &e), "");
  ASSERT_EQ(e.seeds, (std::vector<uint64_t>{1, 2}));
  const auto out = dir / "out";
  // Accuracy 0.99 and 0.70 at every length: mean 0.845, half-width 1.84 before the cut.
  // TVD 0.02 and 0.03: mean 0.025, half-width 0.064, cut at 0 only.
  for (const Variant& v : e.variants) {
    for (uint64_t seed : e.seeds) {
      const auto run = run_directory(out, v, seed);
      prepare_run(run, {v.label, v.model, e.task, v.train, nlohmann::json()});
      const double accuracy = seed == 1 ? 0.99 : 0.70, tvd = seed == 1 ? 0.02 : 0.03;
      nlohmann::json metrics{
          {"accuracy", {{"value", accuracy}, {"ci_low", 0}, {"ci_high", 1}, {"count", 32}}},
          {"tvd", {{"value", tvd}, {"ci_low", 0}, {"ci_high", 1}, {"count", 32}}}};
      nlohmann::json results = nlohmann::json::array();
      for (int64_t n : e.eval.lengths) {
        results.push_back({{"length", n}, {"seq_len", n + 2}, {"metrics", metrics}});
      }
      write_file_atomic(run / "eval_raw.json", nlohmann::json{{"results", results}}.dump());
    }
  }
  const std::string table = collect_results(e, out);
  EXPECT_NE(table.find("0.845 [0.000, 1.000]"), std::string::npos) << table;
  EXPECT_NE(table.find("0.025 [0.000, 0.089]"), std::string::npos) << table;
  const CsvTable summary = read_csv_table(out / "summary.csv");
  // variant, weights, metric, length, mean, half-width, seeds, low, high
  const std::vector<std::string> accuracy = {"pre",    "raw", "accuracy", "2", "0.845",
                                             "1.8424", "2",   "0",        "1"};
  EXPECT_NE(std::find(summary.rows.begin(), summary.rows.end(), accuracy), summary.rows.end())
      << testing::slurp(out / "summary.csv");
}

}  // namespace
}  // namespace normlab
