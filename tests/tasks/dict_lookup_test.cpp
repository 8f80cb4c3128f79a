// dict_lookup: two-field pairs with distinct keys, a query key that occurs, the target its
// value, uniform sampling of keys and of the asked pair, the sampler's buffer reuse, length
// and parameter checks, and the metric.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "task_test_util.hpp"
#include "tasks/task_util.hpp"

namespace normlab {
namespace {

// Checks every sequence; returns the index of the asked pair of each.
std::vector<int64_t> check_lookup_batch(const Batch& batch, int K, int W) {
  std::vector<int64_t> asked;
  const int64_t n = batch.len - 1;
  for (int64_t b = 0; b < batch.batch; ++b) {
    std::set<int32_t> keys;
    const int64_t q = b * batch.len + n;
    EXPECT_EQ(batch.token(q, 0), 0);
    const int32_t query_key = batch.token(q, 1);
    int64_t found = -1;
    for (int64_t t = 0; t < n; ++t) {
      const int32_t key = batch.token(b * batch.len + t, 0);
      const int32_t value = batch.token(b * batch.len + t, 1);
      EXPECT_TRUE(key >= 1 && key <= K) << key;
      EXPECT_TRUE(value >= 1 + K && value < 1 + K + W) << value;
      EXPECT_TRUE(keys.insert(key).second) << "repeated key " << key;
      if (key == query_key) {
        found = t;
        EXPECT_EQ(batch.target_value(q, value), 1.0f) << "target is not the value";
      }
    }
    EXPECT_GE(found, 0) << "the query key does not occur";
    asked.push_back(found);
  }
  return asked;
}

TEST(TaskDictLookup, DistinctKeysQueryPresentTargetRight) {
  const int K = 100, W = 16;
  const auto task = testing::make("dict_lookup", {{"keys", int64_t{K}}});
  EXPECT_EQ(task->vocab(), 1 + K + W);
  EXPECT_EQ(task->fields(), 2);
  Rng rng(61);
  for (const int64_t n : {int64_t{1}, int64_t{2}, int64_t{16}, int64_t{99}, int64_t{100}}) {
    check_lookup_batch(task->make_batch(n, 200, rng), K, W);
  }
}

// At n = K the keys are a permutation of all K keys.
TEST(TaskDictLookup, FullLengthUsesEveryKey) {
  const int K = 64;
  const auto task = testing::make("dict_lookup", {{"keys", int64_t{K}}});
  Rng rng(62);
  const Batch batch = task->make_batch(K, 5, rng);
  check_lookup_batch(batch, K, 16);
  for (int64_t b = 0; b < 5; ++b) {
    std::set<int32_t> keys;
    for (int64_t t = 0; t < K; ++t) keys.insert(batch.token(b * batch.len + t, 0));
    EXPECT_EQ(static_cast<int>(keys.size()), K);
  }
}

// The ordered keys are a uniform sample (first two positions), the asked pair is uniform.
TEST(TaskDictLookup, KeysAndAskedPairAreUniform) {
  const int K = 6;
  const auto task = testing::make("dict_lookup", {{"keys", int64_t{K}}});
  Rng rng(63);
  const int64_t n = 3;
  const Batch batch = task->make_batch(n, 9000, rng);
  const std::vector<int64_t> asked = check_lookup_batch(batch, K, 16);
  std::vector<int64_t> pairs(K * K, 0), by_asked(n, 0);
  for (int64_t b = 0; b < batch.batch; ++b) {
    ++pairs[(batch.token(b * batch.len, 0) - 1) * K + batch.token(b * batch.len + 1, 0) - 1];
    ++by_asked[asked[b]];
  }
  std::vector<int64_t> distinct_pairs;
  for (int i = 0; i < K; ++i) {
    for (int j = 0; j < K; ++j) {
      if (i != j) distinct_pairs.push_back(pairs[i * K + j]);
    }
  }
  EXPECT_LT(testing::chi_square_uniform(distinct_pairs), testing::chi_square_bound(K * K - K - 1));
  EXPECT_LT(testing::chi_square_uniform(by_asked), testing::chi_square_bound(n - 1.0));
}

// The sampler's thread-local permutation is restored after each sample, so tasks of different
// sizes interleaved give the same sequences as each alone.
TEST(TaskDictLookup, InterleavedTasksDoNotDisturbEachOther) {
  const auto big = testing::make("dict_lookup", {{"keys", int64_t{1000}}});
  const auto small = testing::make("dict_lookup", {{"keys", int64_t{30}}});
  Rng a(64), b(65);
  const Batch big_alone = big->make_batch(700, 3, a);
  const Batch small_alone = small->make_batch(20, 3, b);
  Rng c(64), d(65);
  Batch big_mixed, small_mixed;
  big_mixed.resize(3, 701, big->vocab(), 2);
  small_mixed.resize(3, 21, small->vocab(), 2);
  for (int64_t i = 0; i < 3; ++i) {
    big->generate(700, c, big_mixed, i);
    small->generate(20, d, small_mixed, i);
  }
  EXPECT_TRUE(testing::same_batch(big_alone, big_mixed));
  EXPECT_TRUE(testing::same_batch(small_alone, small_mixed));
  // And the sampler itself hands out distinct elements, identity restored after.
  Rng e(66);
  {
    task_util::DistinctSample s(10, 10, e);
    std::set<int64_t> seen;
    for (int i = 0; i < 10; ++i) seen.insert(s[i]);
    EXPECT_EQ(seen.size(), 10u);
  }
  task_util::DistinctSample none(10, 0, e);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(none[i], i);
}

TEST(TaskDictLookup, RejectsMorePairsThanKeys) {
  const auto task = testing::make("dict_lookup", {{"keys", int64_t{50}}});
  Rng rng(1);
  for (const int64_t n : {int64_t{0}, int64_t{51}}) {
    EXPECT_EQ(testing::usage_error([&] { task->make_batch(n, 1, rng); }),
              "task dict_lookup(keys=50, values=16): length " + std::to_string(n) +
                  " is outside its range; allowed: 1 to 50 (the n keys are distinct among 50 key "
                  "tokens)");
  }
  EXPECT_EQ(testing::usage_error([] {
              testing::make("dict_lookup", {{"values", int64_t{0}}});
            }),
            "task dict_lookup: parameter values = 0 is outside its range; allowed: 1 to 1048576");
}

TEST(TaskDictLookup, MetricsOnHandMadeLogits) {
  const auto task = testing::make("dict_lookup", {{"keys", int64_t{40}}});
  Rng rng(67);
  const Batch batch = task->make_batch(10, 100, rng);
  auto perfect = testing::score_all(*task, batch, [&](int64_t b, int64_t t, float* out) {
    testing::logits_from_target(batch, b, t, out, 1.0f, 0.0f);
  });
  EXPECT_EQ(perfect["accuracy"].value, 1.0);
  // The query key itself is never the answer.
  auto key = testing::score_all(*task, batch, [&](int64_t b, int64_t t, float* out) {
    const int32_t k = batch.token(b * batch.len + t, 1);
    for (int j = 0; j < batch.vocab; ++j) out[j] = j == k ? 1.0f : 0.0f;
  });
  EXPECT_EQ(key["accuracy"].value, 0.0);
}

}  // namespace
}  // namespace normlab
