// set_complement: distinct inputs, the target's support is exactly the complement, sampling
// uniform, lengths checked, and the metrics on hand-made logits.
#include <gtest/gtest.h>

#include <set>

#include "task_test_util.hpp"

namespace normlab {
namespace {

TEST(TaskSetComplement, InputsAreDistinctAndTargetIsUniformOnTheComplement) {
  const int v = 16;
  const auto task = testing::make("set_complement", {{"v", int64_t{v}}});
  EXPECT_EQ(task->vocab(), v + 1);
  Rng rng(11);
  for (int64_t s = 1; s < v; ++s) {
    const Batch batch = task->make_batch(s, 200, rng);
    ASSERT_EQ(batch.len, s + 1);
    for (int64_t b = 0; b < batch.batch; ++b) {
      std::set<int32_t> input;
      for (int64_t t = 0; t < s; ++t) {
        const int32_t tok = batch.token(b * batch.len + t);
        ASSERT_TRUE(tok >= 1 && tok <= v);
        ASSERT_TRUE(input.insert(tok).second) << "repeated token " << tok;
      }
      const int64_t q = b * batch.len + s;
      ASSERT_EQ(batch.token(q), 0);
      for (int32_t j = 0; j <= v; ++j) {
        const float want = (j == 0 || input.count(j)) ? 0.0f : 1.0f / static_cast<float>(v - s);
        ASSERT_FLOAT_EQ(batch.target_value(q, j), want) << "s=" << s << " token " << j;
      }
    }
  }
}

// Every ordered sample is equally likely: the (first, second) token pairs are uniform.
TEST(TaskSetComplement, OrderedInputIsUniform) {
  const int v = 6;
  const auto task = testing::make("set_complement", {{"v", int64_t{v}}});
  Rng rng(12);
  const Batch batch = task->make_batch(2, 30 * 30, rng);
  std::vector<int64_t> counts(v * v, 0);
  for (int64_t b = 0; b < batch.batch; ++b) {
    ++counts[(batch.token(b * 3) - 1) * v + batch.token(b * 3 + 1) - 1];
  }
  std::vector<int64_t> pairs;  // the 30 ordered pairs of distinct tokens
  for (int i = 0; i < v; ++i) {
    for (int j = 0; j < v; ++j) {
      if (i == j) {
        EXPECT_EQ(counts[i * v + j], 0);
      } else {
        pairs.push_back(counts[i * v + j]);
      }
    }
  }
  EXPECT_LT(testing::chi_square_uniform(pairs), testing::chi_square_bound(29));
}

// targets=sampled: a one-hot on an absent token, uniform among the absent ones.
TEST(TaskSetComplement, SampledTargetIsAnAbsentTokenChosenUniformly) {
  const int v = 5;
  const auto task =
      testing::make("set_complement", {{"v", int64_t{v}}, {"targets", std::string("sampled")}});
  Rng rng(13);
  const int64_t s = 2;
  const Batch batch = task->make_batch(s, 30000, rng);
  // Rank of the target among the absent tokens in increasing order: uniform on 0..v−s−1.
  std::vector<int64_t> rank_counts(v - s, 0);
  for (int64_t b = 0; b < batch.batch; ++b) {
    std::set<int32_t> input;
    for (int64_t t = 0; t < s; ++t) input.insert(batch.token(b * batch.len + t));
    const int64_t q = b * batch.len + s;
    int32_t target = -1;
    for (int32_t j = 0; j <= v; ++j) {
      if (batch.target_value(q, j) == 1.0f) target = j;
    }
    ASSERT_GE(target, 1);
    ASSERT_EQ(input.count(target), 0u);
    int rank = 0;
    for (int32_t j = 1; j < target; ++j) rank += input.count(j) == 0;
    ++rank_counts[rank];
  }
  EXPECT_LT(testing::chi_square_uniform(rank_counts), testing::chi_square_bound(v - s - 1));
}

TEST(TaskSetComplement, RejectsLengthsThatLeaveNoAbsentToken) {
  const auto task = testing::make("set_complement", {{"v", int64_t{16}}});
  Rng rng(1);
  for (const int64_t s : {int64_t{0}, int64_t{16}, int64_t{40}}) {
    const std::string msg = testing::usage_error([&] { task->make_batch(s, 1, rng); });
    EXPECT_EQ(msg, "task set_complement(v=16, targets=distribution): length " + std::to_string(s) +
                       " is outside its range; allowed: 1 to 15 (s distinct tokens of 1..16 must "
                       "leave at least one absent)");
  }
  EXPECT_EQ(testing::usage_error([] {
              testing::make("set_complement", {{"v", int64_t{1}}});
            }),
            "task set_complement: parameter v = 1 is outside its range; allowed: 2 to 1048576");
}

TEST(TaskSetComplement, MetricsOnHandMadeLogits) {
  const int v = 8;
  for (const std::string targets : {"distribution", "sampled"}) {
    const auto task = testing::make("set_complement", {{"v", int64_t{v}}, {"targets", targets}});
    Rng rng(14);
    const int64_t s = 3;
    const Batch batch = task->make_batch(s, 50, rng);
    auto absent = [&](int64_t b, int32_t j) {
      if (j == 0) return false;
      for (int64_t t = 0; t < s; ++t) {
        if (batch.token(b * batch.len + t) == j) return false;
      }
      return true;
    };
    // Perfect: equal logits on the absent tokens, far lower elsewhere.
    auto perfect = testing::score_all(*task, batch, [&](int64_t b, int64_t, float* out) {
      for (int32_t j = 0; j <= v; ++j) out[j] = absent(b, j) ? 3.0f : -60.0f;
    });
    EXPECT_NEAR(perfect["tvd"].value, 0.0, 1e-9) << targets;
    EXPECT_EQ(perfect["accuracy"].value, 1.0);
    // Wrong: all mass on the first input token.
    auto wrong = testing::score_all(*task, batch, [&](int64_t b, int64_t, float* out) {
      for (int32_t j = 0; j <= v; ++j) out[j] = j == batch.token(b * batch.len) ? 60.0f : 0.0f;
    });
    EXPECT_NEAR(wrong["tvd"].value, 1.0, 1e-9);
    EXPECT_EQ(wrong["accuracy"].value, 0.0);
    // Uniform over all V = v + 1 tokens: TVD = (s + 1)/(v + 1); the tie goes to token 0 (the
    // query), which is never right.
    auto flat = testing::score_all(*task, batch, [&](int64_t, int64_t, float* out) {
      for (int32_t j = 0; j <= v; ++j) out[j] = 0.5f;
    });
    EXPECT_NEAR(flat["tvd"].value, (s + 1.0) / (v + 1.0), 1e-9);
    EXPECT_EQ(flat["accuracy"].value, 0.0);
    // Half right: the top token is absent, but the mass is on one absent token only:
    // TVD = 1 − 1/(v − s).
    auto one = testing::score_all(*task, batch, [&](int64_t b, int64_t, float* out) {
      int32_t first_absent = 1;
      while (!absent(b, first_absent)) ++first_absent;
      for (int32_t j = 0; j <= v; ++j) out[j] = j == first_absent ? 80.0f : 0.0f;
    });
    EXPECT_NEAR(one["tvd"].value, 1.0 - 1.0 / (v - s), 1e-9);
    EXPECT_EQ(one["accuracy"].value, 1.0);
  }
}

}  // namespace
}  // namespace normlab
