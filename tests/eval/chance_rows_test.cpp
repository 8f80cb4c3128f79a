// The evaluator's chance rows (evaluator.hpp): TVD also gets "tvd_chance", the TVD of the
// uniform-over-the-vocabulary predictor on the same samples (the floor of design rule D1), and
// evaluate_chance gives the same rows without a model, whatever the batching.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "normlab/eval/evaluator.hpp"
#include "normlab/model/model.hpp"
#include "normlab/tasks/task.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

const MetricResult* find(const LengthResult& r, const std::string& name) {
  for (const MetricResult& m : r.metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// set_complement(v = 16), V = 17: the ideal distribution is uniform on the 16 − s absent
// elements, so the uniform predictor's TVD is ½((16 − s)(1/(16 − s) − 1/17) + (s + 1)/17)
// = (s + 1)/17 on every sample: the mean is that and the interval has width 0.
TEST(ChanceRows, SetComplementChanceIsTheUniformPredictorsTvd) {
  const auto task = make_task_from_json({{"name", "set_complement"}, {"v", 16}});
  Model<float> model(testing::tiny_model_config(17));
  model.init(1);
  EvalConfig config;
  config.lengths = {2, 9};
  config.samples = 40;
  const std::vector<LengthResult> results = evaluate(model, *task, config);
  ASSERT_EQ(results.size(), 2u);
  for (const LengthResult& r : results) {
    ASSERT_EQ(r.metrics.size(), 3u);
    EXPECT_EQ(r.metrics[0].name, "tvd");
    EXPECT_EQ(r.metrics[1].name, "accuracy");
    const MetricResult& chance = r.metrics[2];
    EXPECT_EQ(chance.name, "tvd_chance");
    // Each sequence's TVD is a sum of 17 double terms of size ≤ 1: rounding ≤ 17·2^-53 each.
    EXPECT_NEAR(chance.value, (r.length + 1.0) / 17.0, 1e-14) << r.length;
    EXPECT_NEAR(chance.ci_high - chance.ci_low, 0.0, 1e-12);
    EXPECT_EQ(chance.count, 40);
    // The model's TVD is not the uniform predictor's: the row is not a copy.
    EXPECT_NE(r.metrics[0].value, chance.value);
  }
}

// dyck(k = 2, m = 4), V = 6. At n = 2 every prefix (BOS; one opener; the complete string) has
// three legal next tokens, so the uniform predictor's TVD is 1 − 3/6 = ½ at each position; at
// n = 12 the legal sets differ between strings, so the chance depends on the sample.
TEST(ChanceRows, DyckChanceDependsOnTheSampleAndEvaluateChanceGivesTheSameRows) {
  const auto task = make_task_from_json({{"name", "dyck"}, {"k", 2}, {"m", 4}});
  Model<float> model(testing::tiny_model_config(6));
  model.init(2);
  EvalConfig config;
  config.lengths = {2, 12};
  config.samples = 30;
  config.max_rows = 20;  // batches of 6 and 1 sequences
  const std::vector<LengthResult> with_model = evaluate(model, *task, config);
  const MetricResult* two = find(with_model[0], "tvd_chance");
  ASSERT_NE(two, nullptr);
  EXPECT_NEAR(two->value, 0.5, 1e-15);
  const MetricResult* twelve = find(with_model[1], "tvd_chance");
  ASSERT_NE(twelve, nullptr);
  EXPECT_GT(twelve->ci_high - twelve->ci_low, 1e-6);

  for (int64_t max_rows : {int64_t{20}, int64_t{1} << 16}) {
    config.max_rows = max_rows;
    const std::vector<LengthResult> alone = evaluate_chance(*task, config);
    ASSERT_EQ(alone.size(), 2u);
    for (size_t i = 0; i < alone.size(); ++i) {
      ASSERT_EQ(alone[i].metrics.size(), 1u);
      EXPECT_EQ(alone[i].metrics[0].name, "tvd_chance");
      // The same samples scored by the same code: the same bits.
      EXPECT_EQ(alone[i].metrics[0].value, find(with_model[i], "tvd_chance")->value)
          << "max_rows " << max_rows << ", length " << alone[i].length;
    }
  }
}

TEST(ChanceRows, TasksWithoutTvdGetNone) {
  const auto task = make_task_from_json({{"name", "tomita"}, {"n", 3}});
  Model<float> model(testing::tiny_model_config(5));
  model.init(3);
  EvalConfig config;
  config.lengths = {4};
  config.samples = 10;
  const std::vector<LengthResult> results = evaluate(model, *task, config);
  ASSERT_EQ(results[0].metrics.size(), 2u);
  EXPECT_EQ(results[0].metrics[0].name, "roc_auc");
  EXPECT_EQ(results[0].metrics[1].name, "accuracy");
  EXPECT_TRUE(evaluate_chance(*task, config)[0].metrics.empty());
  EXPECT_EQ(chance_metric_name("tvd"), "tvd_chance");
}

}  // namespace
}  // namespace normlab
