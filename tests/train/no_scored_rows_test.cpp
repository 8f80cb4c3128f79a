// A batch without a scored row (every target unscored, or every weight 0; Python's grads with
// targets of -1): the loss is 0 and every gradient 0, with no backward pass over zero rows of
// logits (src/train/train_step.cpp). Under UBSan the backward pass computed offsets from the
// null data of the empty logit gradient (fuzz/corpus/python_args/regression_grads_no_scored_row).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "normlab/base/batch.hpp"
#include "normlab/model/model.hpp"
#include "normlab/train/train_step.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

Batch tokens_only() {
  Batch b;
  b.resize(2, 3, 9);
  for (size_t i = 0; i < b.tokens.size(); ++i) b.tokens[i] = static_cast<int32_t>(i % 9);
  return b;
}

bool all_zero(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return x == 0.0f; });
}

TEST(NoScoredRows, LossAndEveryGradientAreZero) {
  Model<float> model(testing::small_model_config(Scheme::pre));
  model.init(1);
  Batch scored = tokens_only();
  scored.set_one_hot(0, 3);
  std::vector<float> scratch;
  EXPECT_GT(loss_and_grads(model, scored, scratch), 0.0);
  EXPECT_FALSE(all_zero(model.grads()));

  // A new scratch vector each time, as Python's grads passes: empty, its data() null.
  std::vector<float> dlogits;
  EXPECT_EQ(loss_and_grads(model, tokens_only(), dlogits), 0.0);
  EXPECT_TRUE(all_zero(model.grads()));
  EXPECT_TRUE(dlogits.empty());

  Batch weightless = tokens_only();
  weightless.set_one_hot(0, 3);
  weightless.weight[0] = 0.0f;
  std::vector<float> dlogits2;
  EXPECT_EQ(loss_and_grads(model, weightless, dlogits2), 0.0);
  EXPECT_TRUE(all_zero(model.grads()));
}

}  // namespace
}  // namespace normlab
