// The length-sweep evaluator scores the task's validation sequences (generate_validation; for
// char_lm, windows of the held-out fortunes), and a task without its own validation sequences
// gives the same batches as before the split existed.
#include <gtest/gtest.h>

#include "normlab/eval/evaluator.hpp"
#include "normlab/model/model.hpp"
#include "normlab/tasks/task.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

// Training sequences are all token 0, validation sequences all token 1; the metric says which
// the evaluator scored.
class SplitProbe final : public Task {
 public:
  std::string label() const override { return "split_probe"; }
  int vocab() const override { return 2; }
  LengthRange length_range() const override { return {1, 64, 1}; }
  int64_t sequence_length(int64_t n) const override { return n; }
  void generate(int64_t n, Rng&, Batch& batch, int64_t b) const override { fill(n, 0, batch, b); }
  void generate_validation(int64_t n, Rng&, Batch& batch, int64_t b) const override {
    fill(n, 1, batch, b);
  }
  void score(const Batch& batch, int64_t b, const float*, MetricAccumulator& m) const override {
    m.add_proportion("validation", batch.token(b * batch.len) == 1);
  }
  std::vector<std::string> metric_names() const override { return {"validation"}; }

 private:
  static void fill(int64_t n, int32_t tok, Batch& batch, int64_t b) {
    for (int64_t t = 0; t < n; ++t) batch.token(b * n + t) = tok;
    batch.set_one_hot(b * n + n - 1, tok);
  }
};

TEST(EvaluationSplit, EvaluatorScoresValidationSequences) {
  Model<float> model(testing::tiny_model_config(2));
  model.init(1);
  EvalConfig config;
  config.lengths = {3, 8};
  config.samples = 5;
  const auto results = evaluate(model, SplitProbe(), config);
  ASSERT_EQ(results.size(), 2u);
  for (const LengthResult& r : results) {
    ASSERT_EQ(r.metrics.size(), 1u);
    EXPECT_EQ(r.metrics[0].value, 1.0) << "length " << r.length;
    EXPECT_EQ(r.metrics[0].count, 5);
  }
}

TEST(EvaluationSplit, DefaultValidationSequencesAreTheTrainingDistribution) {
  // A synthetic task without its own generate_validation: the same batch either way.
  const TaskInfo& info = find_task("dyck");
  TaskParams p;
  for (const TaskParamDef& d : info.params) p[d.name] = d.fallback;
  const auto task = info.make(p);
  Rng a(4), b(4);
  const Batch x = task->make_batch(10, 3, a), y = task->make_batch(10, 3, b, true);
  EXPECT_EQ(x.tokens, y.tokens);
  EXPECT_EQ(x.target_slot, y.target_slot);
  EXPECT_EQ(x.target_offsets, y.target_offsets);
  EXPECT_EQ(x.target_tokens, y.target_tokens);
  EXPECT_EQ(x.target_probs, y.target_probs);
}

}  // namespace
}  // namespace normlab
