// max_retrieval: i.i.d. uniform inputs, the target is their maximum, lengths checked, metrics.
#include <gtest/gtest.h>

#include <algorithm>

#include "task_test_util.hpp"

namespace normlab {
namespace {

TEST(TaskMaxRetrieval, TargetIsTheLargestInputToken) {
  const int v = 64;
  const auto task = testing::make("max_retrieval", {{"v", int64_t{v}}});
  EXPECT_EQ(task->vocab(), v + 1);
  Rng rng(21);
  for (const int64_t n : {int64_t{1}, int64_t{2}, int64_t{16}, int64_t{300}}) {
    const Batch batch = task->make_batch(n, 200, rng);
    for (int64_t b = 0; b < batch.batch; ++b) {
      int32_t best = 0;
      for (int64_t t = 0; t < n; ++t) {
        const int32_t tok = batch.token(b * batch.len + t);
        ASSERT_TRUE(tok >= 1 && tok <= v);
        best = std::max(best, tok);
      }
      const int64_t q = b * batch.len + n;
      ASSERT_EQ(batch.token(q), 0);
      ASSERT_EQ(batch.target_value(q, best), 1.0f) << "n=" << n;
    }
  }
}

TEST(TaskMaxRetrieval, InputTokensAreUniform) {
  const int v = 10;
  const auto task = testing::make("max_retrieval", {{"v", int64_t{v}}});
  Rng rng(22);
  const Batch batch = task->make_batch(16, 500, rng);
  std::vector<int64_t> counts(v, 0);
  for (int64_t r = 0; r < batch.batch * batch.len; ++r) {
    if (batch.weight[r] == 0) ++counts[batch.token(r) - 1];
  }
  EXPECT_LT(testing::chi_square_uniform(counts), testing::chi_square_bound(v - 1));
}

TEST(TaskMaxRetrieval, RejectsEmptyInput) {
  const auto task = testing::make("max_retrieval");
  Rng rng(1);
  EXPECT_EQ(testing::usage_error([&] { task->make_batch(0, 1, rng); }),
            "task max_retrieval(v=64): length 0 is outside its range; allowed: at least 1");
}

TEST(TaskMaxRetrieval, MetricsOnHandMadeLogits) {
  const auto task = testing::make("max_retrieval", {{"v", int64_t{20}}});
  Rng rng(23);
  const Batch batch = task->make_batch(5, 100, rng);
  auto perfect = testing::score_all(*task, batch, [&](int64_t b, int64_t t, float* out) {
    testing::logits_from_target(batch, b, t, out, 2.0f, 1.0f);
  });
  EXPECT_EQ(perfect["accuracy"].value, 1.0);
  // The smallest input token instead of the largest: wrong unless all inputs are equal.
  int64_t all_equal = 0;
  auto wrong = testing::score_all(*task, batch, [&](int64_t b, int64_t, float* out) {
    int32_t lo = 1000, hi = 0;
    for (int64_t t = 0; t < 5; ++t) {
      lo = std::min(lo, batch.token(b * batch.len + t));
      hi = std::max(hi, batch.token(b * batch.len + t));
    }
    all_equal += lo == hi;
    for (int j = 0; j < batch.vocab; ++j) out[j] = j == lo ? 1.0f : 0.0f;
  });
  EXPECT_DOUBLE_EQ(wrong["accuracy"].value, all_equal / 100.0);
}

}  // namespace
}  // namespace normlab
