// mqar: zoology's layout (docs/benchmarks/mqar.md §2.4) in every sequence, the power law of the
// query slots (one pair, and two drawn without replacement), the metric and its chance level,
// and the length and parameter checks.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "task_test_util.hpp"

namespace normlab {
namespace {

// Keys at 2j in 1..V/2−1 and distinct, values at 2j+1 in V/2..V−1 and distinct; each key queried
// exactly once at an even position ≥ 2k whose target is its value; no other position scored;
// filler 0. Returns the query slots g = (t − 2k) / 2 of key `key` in each sequence.
std::vector<int64_t> check_batch(const Batch& batch, int V, int64_t k, int64_t key = 0) {
  std::vector<int64_t> first_slots;
  const int64_t L = batch.len;
  for (int64_t b = 0; b < batch.batch; ++b) {
    const int64_t row0 = b * L;
    std::set<int32_t> keys, values;
    for (int64_t j = 0; j < k; ++j) {
      const int32_t key = batch.token(row0 + 2 * j), value = batch.token(row0 + 2 * j + 1);
      EXPECT_TRUE(key >= 1 && key < V / 2) << key;
      EXPECT_TRUE(value >= V / 2 && value < V) << value;
      keys.insert(key);
      values.insert(value);
      EXPECT_EQ(batch.weight[row0 + 2 * j], 0.0f);
      EXPECT_EQ(batch.weight[row0 + 2 * j + 1], 0.0f);
    }
    EXPECT_EQ(static_cast<int64_t>(keys.size()), k);
    EXPECT_EQ(static_cast<int64_t>(values.size()), k);
    std::vector<int64_t> queried(k, 0);
    for (int64_t t = 2 * k; t < L; ++t) {
      const int32_t tok = batch.token(row0 + t);
      if (batch.weight[row0 + t] == 0.0f) {
        EXPECT_EQ(tok, 0) << "filler at " << t;
        continue;
      }
      EXPECT_EQ(t % 2, 0) << "a query at odd position " << t;
      int64_t j = 0;
      while (j < k && batch.token(row0 + 2 * j) != tok) ++j;
      if (j == k) {
        ADD_FAILURE() << "the query " << tok << " at " << t << " is not a key";
        continue;
      }
      ++queried[j];
      EXPECT_EQ(batch.target_value(row0 + t, batch.token(row0 + 2 * j + 1)), 1.0f);
      if (j == key) first_slots.push_back((t - 2 * k) / 2);
    }
    for (int64_t j = 0; j < k; ++j) EXPECT_EQ(queried[j], 1) << "key " << j;
  }
  return first_slots;
}

TEST(TaskMqar, ZoologysLayoutInEverySequence) {
  const auto task = testing::make("mqar", {{"vocab", int64_t{64}}, {"pairs", int64_t{4}}});
  EXPECT_EQ(task->vocab(), 64);
  Rng rng(61);
  for (const int64_t L : {int64_t{16}, int64_t{18}, int64_t{40}, int64_t{62}}) {
    check_batch(task->make_batch(L, 200, rng), 64, 4);
  }
  // zoology's Figure 2 sizes at its vocabulary.
  const auto big = testing::make("mqar", {{"pairs", int64_t{64}}});
  check_batch(big->make_batch(512, 4, rng), 8192, 64);
}

// An odd vocabulary: keys 1..h−1 and values h..V−1 with h = ⌊V/2⌋, as zoology's
// vocab_size // 2 splits it; the value V − 1 is drawn (V = 9: keys 1..3, values 4..8; L = 8 < V).
TEST(TaskMqar, AnOddVocabularyDrawsEveryValue) {
  const auto task = testing::make("mqar", {{"vocab", int64_t{9}}, {"pairs", int64_t{2}}});
  Rng rng(5);
  const Batch batch = task->make_batch(8, 400, rng);
  std::set<int32_t> keys, values;
  for (int64_t b = 0; b < batch.batch; ++b) {
    for (int64_t j = 0; j < 2; ++j) {
      keys.insert(batch.token(b * 8 + 2 * j));
      values.insert(batch.token(b * 8 + 2 * j + 1));
    }
  }
  EXPECT_EQ(keys, (std::set<int32_t>{1, 2, 3}));
  EXPECT_EQ(values, (std::set<int32_t>{4, 5, 6, 7, 8}));
}

// With one pair the query's slot g ∈ {0..space−1} has P(g) = (g+1)^(a−1) / Σ (h+1)^(a−1);
// a = 0.5 makes the law steep enough to tell from uniform. Each slot's frequency over 20000
// sequences within 5 standard deviations of its probability.
TEST(TaskMqar, QuerySlotsFollowThePowerLaw) {
  const double a = 0.5;
  const int64_t space = 8, n = 20000;
  const auto task =
      testing::make("mqar", {{"vocab", int64_t{64}}, {"pairs", int64_t{1}}, {"power_a", a}});
  Rng rng(62);
  const std::vector<int64_t> slots = check_batch(task->make_batch(2 + 2 * space, n, rng), 64, 1);
  ASSERT_EQ(static_cast<int64_t>(slots.size()), n);
  std::vector<double> p(space);
  double total = 0;
  for (int64_t g = 0; g < space; ++g) total += p[g] = std::pow(g + 1.0, a - 1.0);
  for (int64_t g = 0; g < space; ++g) {
    const double expected = p[g] / total;
    double seen = 0;
    for (int64_t s : slots) seen += s == g;
    seen /= n;
    EXPECT_NEAR(seen, expected, 5 * std::sqrt(expected * (1 - expected) / n)) << "slot " << g;
  }
}

// With two pairs the slots are drawn without replacement, each draw renormalized over the slots
// left (numpy's choice(replace=False, p=p)): key 0's slot has P(g) = p_g, key 1's
// P(g) = p_g Σ_{h≠g} p_h / (1 − p_h). Each slot's frequency of each key over 20000 sequences
// within 5 standard deviations of its probability.
TEST(TaskMqar, TwoPairsDrawTheirSlotsWithoutReplacement) {
  const double a = 0.5;
  const int64_t space = 6, n = 20000;
  const auto task =
      testing::make("mqar", {{"vocab", int64_t{64}}, {"pairs", int64_t{2}}, {"power_a", a}});
  std::vector<double> p(space);
  double total = 0;
  for (int64_t g = 0; g < space; ++g) total += p[g] = std::pow(g + 1.0, a - 1.0);
  for (double& x : p) x /= total;
  for (int64_t key = 0; key < 2; ++key) {
    SCOPED_TRACE(::testing::Message() << "key " << key);
    Rng rng(63);
    const std::vector<int64_t> slots =
        check_batch(task->make_batch(4 + 2 * space, n, rng), 64, 2, key);
    ASSERT_EQ(static_cast<int64_t>(slots.size()), n);
    for (int64_t g = 0; g < space; ++g) {
      double expected = p[g];
      if (key == 1) {
        double after = 0;
        for (int64_t h = 0; h < space; ++h) after += h == g ? 0.0 : p[h] / (1 - p[h]);
        expected = p[g] * after;
      }
      double seen = 0;
      for (int64_t s : slots) seen += s == g;
      seen /= n;
      EXPECT_NEAR(seen, expected, 5 * std::sqrt(expected * (1 - expected) / n)) << "slot " << g;
    }
  }
}

// Every scored position scored once, against its value: logits that put the value highest
// score 1; logits drawn at random score the chance of an argmax over V, 1/V.
TEST(TaskMqar, AccuracyOverTheQueriesAndItsChanceLevel) {
  const int V = 16;
  const int64_t k = 3;
  const auto task = testing::make("mqar", {{"vocab", int64_t{V}}, {"pairs", k}});
  Rng rng(63);
  const Batch batch = task->make_batch(14, 2000, rng);
  MetricAccumulator right, random;
  std::vector<float> logits(k * V);
  for (int64_t b = 0; b < batch.batch; ++b) {
    int64_t row = 0;
    for (int64_t t = 0; t < batch.len; ++t) {
      const int64_t n = b * batch.len + t;
      if (batch.weight[n] == 0.0f) continue;
      for (int v = 0; v < V; ++v) logits[row * V + v] = v == batch.target(n).most_likely();
      ++row;
    }
    ASSERT_EQ(row, k);
    task->score(batch, b, logits.data(), right);
    for (float& x : logits) x = static_cast<float>(rng.uniform());
    task->score(batch, b, logits.data(), random);
  }
  EXPECT_EQ(right.results().at(0).value, 1.0);
  const double chance = 1.0 / V, count = 2000.0 * k;
  EXPECT_NEAR(random.results().at(0).value, chance, 5 * std::sqrt(chance * (1 - chance) / count));
}

TEST(TaskMqar, LengthsAndParametersAreChecked) {
  const auto task = testing::make("mqar", {{"vocab", int64_t{64}}, {"pairs", int64_t{4}}});
  EXPECT_NE(testing::usage_error([&] { task->check_length(17); }).find("L even"),
            std::string::npos);
  EXPECT_NE(testing::usage_error([&] { task->check_length(14); }).find("4k = 16"),
            std::string::npos);
  EXPECT_NE(testing::usage_error([&] {
              testing::make("mqar", {{"vocab", int64_t{64}}, {"pairs", int64_t{16}}});
            }).find("pairs below V/4"),
            std::string::npos);
  EXPECT_NE(testing::usage_error([&] {
              testing::make("mqar", {{"power_a", 0.0}});
            }).find("power_a"),
            std::string::npos);
}

}  // namespace
}  // namespace normlab
