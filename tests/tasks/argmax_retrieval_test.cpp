// argmax_retrieval: two-field items, a unique maximum whose value is the target, the maximum's
// distribution, very long lengths, length and parameter checks, and the metric.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "task_test_util.hpp"

namespace normlab {
namespace {

// Checks every sequence: items (score, value) with tokens in their ranges, exactly one item
// with the highest score, the query (0, kNoToken), and the target the max item's value.
// Returns the max scores seen.
std::vector<int64_t> check_argmax_batch(const Batch& batch, int S, int W) {
  std::vector<int64_t> maxima;
  const int64_t n = batch.len - 1;
  for (int64_t b = 0; b < batch.batch; ++b) {
    int64_t best = -1, at = -1, ties = 0;
    for (int64_t t = 0; t < n; ++t) {
      const int32_t score = batch.token(b * batch.len + t, 0);
      const int32_t value = batch.token(b * batch.len + t, 1);
      EXPECT_TRUE(score >= 1 && score <= S) << score;
      EXPECT_TRUE(value >= 1 + S && value < 1 + S + W) << value;
      if (score > best) {
        best = score;
        at = t;
        ties = 0;
      } else if (score == best) {
        ++ties;
      }
    }
    EXPECT_EQ(ties, 0) << "the maximum is not unique";
    const int64_t q = b * batch.len + n;
    EXPECT_EQ(batch.token(q, 0), 0);
    EXPECT_EQ(batch.token(q, 1), kNoToken);
    EXPECT_EQ(batch.target_value(q, batch.token(b * batch.len + at, 1)), 1.0f);
    maxima.push_back(best - 1);
  }
  return maxima;
}

TEST(TaskArgmaxRetrieval, UniqueMaximumAndTargetIsItsValue) {
  const int S = 16, W = 16;
  const auto task = testing::make("argmax_retrieval");
  EXPECT_EQ(task->vocab(), 1 + S + W);
  EXPECT_EQ(task->fields(), 2);
  Rng rng(51);
  for (const int64_t n : {int64_t{1}, int64_t{2}, int64_t{16}, int64_t{500}}) {
    check_argmax_batch(task->make_batch(n, 300, rng), S, W);
  }
}

// s_max is uniform on {1..S−1}; the position of the max item is uniform.
TEST(TaskArgmaxRetrieval, MaximumScoreAndPositionAreUniform) {
  const int S = 8;
  const auto task = testing::make("argmax_retrieval", {{"scores", int64_t{S}}});
  Rng rng(52);
  const int64_t n = 6;
  const Batch batch = task->make_batch(n, 7000, rng);
  std::vector<int64_t> by_score(S - 1, 0), by_position(n, 0);
  for (int64_t b = 0; b < batch.batch; ++b) {
    int32_t best = -1;
    int64_t at = 0;
    for (int64_t t = 0; t < n; ++t) {
      if (batch.token(b * batch.len + t, 0) > best) {
        best = batch.token(b * batch.len + t, 0);
        at = t;
      }
    }
    ASSERT_GE(best - 1, 1) << "s_max = 0";
    ++by_score[best - 2];
    ++by_position[at];
  }
  EXPECT_LT(testing::chi_square_uniform(by_score), testing::chi_square_bound(S - 2));
  EXPECT_LT(testing::chi_square_uniform(by_position), testing::chi_square_bound(n - 1.0));
}

TEST(TaskArgmaxRetrieval, VeryLongSequencesAreCheap) {
  const auto task = testing::make("argmax_retrieval", {{"scores", int64_t{4}}});
  Rng rng(53);
  const auto start = std::chrono::steady_clock::now();
  const Batch batch = task->make_batch(65536, 2, rng);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  check_argmax_batch(batch, 4, 16);
  EXPECT_LT(seconds, 1.0);  // ~1 ms in practice; a loose bound against accidental O(n^2)
}

TEST(TaskArgmaxRetrieval, RejectsEmptyInputAndTooFewScores) {
  const auto task = testing::make("argmax_retrieval");
  Rng rng(1);
  EXPECT_EQ(testing::usage_error([&] { task->make_batch(0, 1, rng); }),
            "task argmax_retrieval(scores=16, values=16): length 0 is outside its range; "
            "allowed: at least 1");
  EXPECT_EQ(
      testing::usage_error([] {
        testing::make("argmax_retrieval", {{"scores", int64_t{1}}});
      }),
      "task argmax_retrieval: parameter scores = 1 is outside its range; allowed: 2 to 1048576");
}

TEST(TaskArgmaxRetrieval, MetricsOnHandMadeLogits) {
  const auto task = testing::make("argmax_retrieval");
  Rng rng(54);
  const Batch batch = task->make_batch(8, 100, rng);
  auto perfect = testing::score_all(*task, batch, [&](int64_t b, int64_t t, float* out) {
    testing::logits_from_target(batch, b, t, out, 1.0f, 0.0f);
  });
  EXPECT_EQ(perfect["accuracy"].value, 1.0);
  // The value of the first item: right exactly when it is the max item or shares its value.
  int64_t lucky = 0;
  auto first = testing::score_all(*task, batch, [&](int64_t b, int64_t t, float* out) {
    const int32_t v = batch.token(b * batch.len, 1);
    lucky += batch.target_value((b * batch.len + t), v) == 1.0f;
    for (int j = 0; j < batch.vocab; ++j) out[j] = j == v ? 1.0f : 0.0f;
  });
  EXPECT_DOUBLE_EQ(first["accuracy"].value, lucky / 100.0);
  EXPECT_LT(lucky, 60);
}

}  // namespace
}  // namespace normlab
