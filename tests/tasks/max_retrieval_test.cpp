// max_retrieval: the vocabulary and field layout, distinct priorities with a unique maximum
// whose class is the target, the top-two gap against its closed form, the chance level (the
// target class is uniform), length and parameter checks, and the metric.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "task_test_util.hpp"

namespace normlab {
namespace {

// One decoded item: its priority level and class index.
struct Item {
  int64_t level;
  int32_t cls;
};

// Decodes sequence b's n items, checking every field's token range on the way: digit j of an
// item is in [1 + j·base, 1 + (j + 1)·base), its class in [1 + m·base, 1 + m·base + C).
std::vector<Item> items_of(const Batch& batch, int64_t b, int base, int classes) {
  const int m = batch.fields - 1;
  const int64_t n = batch.len - 1;
  std::vector<Item> items;
  for (int64_t t = 0; t < n; ++t) {
    const int64_t row = b * batch.len + t;
    int64_t level = 0;
    for (int j = 0; j < m; ++j) {
      const int32_t tok = batch.token(row, j);
      EXPECT_TRUE(tok >= 1 + j * base && tok < 1 + (j + 1) * base) << "digit " << j << ": " << tok;
      level = level * base + (tok - 1 - j * base);
    }
    const int32_t cls = batch.token(row, m) - (1 + m * base);
    EXPECT_TRUE(cls >= 0 && cls < classes) << cls;
    items.push_back({level, cls});
  }
  return items;
}

// The index of the item with the highest level.
int64_t top_item(const std::vector<Item>& items) {
  int64_t at = 0;
  for (int64_t i = 1; i < static_cast<int64_t>(items.size()); ++i) {
    if (items[i].level > items[at].level) at = i;
  }
  return at;
}

// Checks sequence b: n distinct levels below P (so a unique maximum), the query position
// (query token, then kNoToken in every digit field), and the target the top item's class.
void check_sequence(const Batch& batch, int64_t b, int levels, int base, int classes) {
  const std::vector<Item> items = items_of(batch, b, base, classes);
  std::set<int64_t> seen;
  for (const Item& it : items) {
    ASSERT_TRUE(it.level >= 0 && it.level < levels) << it.level;
    ASSERT_TRUE(seen.insert(it.level).second) << "level " << it.level << " twice";
  }
  const int64_t q = b * batch.len + batch.len - 1;
  ASSERT_EQ(batch.token(q, 0), 0);
  for (int f = 1; f < batch.fields; ++f) ASSERT_EQ(batch.token(q, f), kNoToken);
  const int m = batch.fields - 1;
  const int32_t answer = 1 + m * base + items[top_item(items)].cls;
  ASSERT_EQ(batch.target_value(q, answer), 1.0f);
}

TEST(TaskMaxRetrieval, LayoutAndTargetAtTheDefaults) {
  // P = 256 levels in base 16: m = 2 digit fields and one class field; V = 1 + 2·16 + 10.
  const auto task = testing::make("max_retrieval");
  EXPECT_EQ(task->vocab(), 43);
  EXPECT_EQ(task->fields(), 3);
  EXPECT_EQ(task->label(), "max_retrieval(levels=256, base=16, classes=10)");
  Rng rng(31);
  for (const int64_t n : {int64_t{1}, int64_t{2}, int64_t{16}, int64_t{255}, int64_t{256}}) {
    SCOPED_TRACE(n);
    const Batch batch = task->make_batch(n, 100, rng);
    testing::expect_well_formed(*task, batch, n, testing::Scored::last);
    for (int64_t b = 0; b < batch.batch; ++b) check_sequence(batch, b, 256, 16, 10);
  }
}

TEST(TaskMaxRetrieval, LayoutWithOneDigitAndWithThree) {
  // base ≥ P: one priority field; P = 100 in base 4: 4^3 = 64 < 100 ≤ 4^4, so m = 4.
  struct Case {
    int levels, base, classes, fields, vocab;
  };
  for (const Case c : {Case{5, 8, 3, 2, 1 + 8 + 3}, Case{100, 4, 2, 5, 1 + 16 + 2}}) {
    SCOPED_TRACE(c.levels);
    const auto task = testing::make("max_retrieval", {{"levels", int64_t{c.levels}},
                                                      {"base", int64_t{c.base}},
                                                      {"classes", int64_t{c.classes}}});
    EXPECT_EQ(task->fields(), c.fields);
    EXPECT_EQ(task->vocab(), c.vocab);
    Rng rng(32);
    for (const int64_t n : {int64_t{1}, int64_t{c.levels}}) {
      const Batch batch = task->make_batch(n, 50, rng);
      testing::expect_well_formed(*task, batch, n, testing::Scored::last);
      for (int64_t b = 0; b < batch.batch; ++b)
        check_sequence(batch, b, c.levels, c.base, c.classes);
    }
  }
}

// C(n, r) as an exact integer (small arguments only).
int64_t choose(int64_t n, int64_t r) {
  if (r < 0 || r > n) return 0;
  int64_t out = 1;
  for (int64_t i = 1; i <= r; ++i) out = out * (n - r + i) / i;  // exact at every step
  return out;
}

// The gap between the two highest of k ≥ 2 distinct levels drawn uniformly without replacement
// from {0..P−1}: the top at t and the second at t − g leave the other k − 2 below t − g, in
// C(t − g, k − 2) ways; summing over t = g..P−1 (hockey stick, Σ_{j ≤ N} C(j, r) = C(N+1, r+1))
//   P(gap = g) = C(P − g, k − 1) / C(P, k),   g = 1..P − k + 1.
double gap_probability(int64_t levels, int64_t k, int64_t g) {
  return static_cast<double>(choose(levels - g, k - 1)) / static_cast<double>(choose(levels, k));
}

TEST(TaskMaxRetrieval, GapClosedFormCountsEverySubset) {
  // Exact: over all C(P, k) subsets, the number with gap g is C(P − g, k − 1).
  for (const int64_t levels : {2, 5, 9}) {
    for (int64_t k = 2; k <= levels; ++k) {
      std::vector<int64_t> count(levels + 1, 0);
      for (uint32_t mask = 0; mask < (1u << levels); ++mask) {
        if (__builtin_popcount(mask) != k) continue;
        const int top = 31 - __builtin_clz(mask);
        const uint32_t rest = mask & ~(1u << top);
        ++count[top - (31 - __builtin_clz(rest))];
      }
      int64_t gap_sum = 0;
      for (int64_t g = 1; g <= levels; ++g) {
        EXPECT_EQ(count[g], choose(levels - g, k - 1)) << "P=" << levels << " k=" << k;
        gap_sum += g * count[g];
      }
      // The mean gap is (P + 1)/(k + 1): k + 1 exchangeable spacings fill P + 1.
      EXPECT_EQ(gap_sum * (k + 1), choose(levels, k) * (levels + 1)) << "P=" << levels;
    }
  }
}

// Pearson's chi-square of `counts` against probabilities `p` (N = Σ counts), with the bins of
// expected count below 5 pooled into the last bin kept; returns {chi2, degrees of freedom}.
std::pair<double, int> chi_square(const std::vector<int64_t>& counts,
                                  const std::vector<double>& p) {
  double total = 0;
  for (int64_t c : counts) total += static_cast<double>(c);
  std::vector<double> observed, expected;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double e = total * p[i];
    if (e >= 5 || expected.empty()) {
      observed.push_back(static_cast<double>(counts[i]));
      expected.push_back(e);
    } else {
      observed.back() += static_cast<double>(counts[i]);
      expected.back() += e;
    }
  }
  double chi2 = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    chi2 += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  }
  return {chi2, static_cast<int>(observed.size()) - 1};
}

TEST(TaskMaxRetrieval, TopTwoGapFollowsItsClosedForm) {
  // P = 16 levels in base 4 (two digit fields), k = 6 items: gaps 1..11.
  const int levels = 16, base = 4, classes = 10;
  const int64_t k = 6, sequences = 20000;
  const auto task =
      testing::make("max_retrieval", {{"levels", int64_t{levels}}, {"base", int64_t{base}}});
  Rng rng(33);
  const Batch batch = task->make_batch(k, sequences, rng);
  std::vector<int64_t> counts(levels - k + 1, 0);  // gap g at index g − 1
  std::vector<double> p(counts.size());
  double sum = 0;
  for (size_t i = 0; i < p.size(); ++i) sum += p[i] = gap_probability(levels, k, i + 1);
  ASSERT_NEAR(sum, 1.0, 1e-12);
  for (int64_t b = 0; b < sequences; ++b) {
    std::vector<Item> items = items_of(batch, b, base, classes);
    std::vector<int64_t> sorted;
    for (const Item& it : items) sorted.push_back(it.level);
    std::sort(sorted.rbegin(), sorted.rend());
    const int64_t gap = sorted[0] - sorted[1];
    ASSERT_TRUE(gap >= 1 && gap <= levels - k + 1) << gap;
    ++counts[gap - 1];
  }
  const auto [chi2, df] = chi_square(counts, p);
  EXPECT_GE(df, 5);
  EXPECT_LT(chi2, testing::chi_square_bound(df));
}

TEST(TaskMaxRetrieval, TargetClassIsUniformSoChanceIsOneOverC) {
  // The target is the class of one item, drawn independently of the levels: uniform on the C
  // classes. Each class count is Binomial(N, 1/C); 5 standard deviations bound it (a uniform
  // sampler fails a bin with probability 5.7e-7). The top item's position is uniform too.
  const int classes = 10;
  const int64_t n = 16, sequences = 10000;
  const auto task = testing::make("max_retrieval");
  Rng rng(34);
  const Batch batch = task->make_batch(n, sequences, rng);
  std::vector<int64_t> by_class(classes, 0), by_position(n, 0);
  for (int64_t b = 0; b < sequences; ++b) {
    const std::vector<Item> items = items_of(batch, b, 16, classes);
    const int64_t at = top_item(items);
    ++by_class[items[at].cls];
    ++by_position[at];
  }
  const double mean = static_cast<double>(sequences) / classes;
  const double bound = 5.0 * std::sqrt(sequences * (1.0 / classes) * (1.0 - 1.0 / classes));
  for (int c = 0; c < classes; ++c) {
    EXPECT_LT(std::abs(static_cast<double>(by_class[c]) - mean), bound) << "class " << c;
  }
  EXPECT_LT(testing::chi_square_uniform(by_position), testing::chi_square_bound(n - 1.0));
}

TEST(TaskMaxRetrieval, RejectsLengthsBeyondTheLevelsAndBadParameters) {
  const auto task = testing::make("max_retrieval");
  Rng rng(1);
  EXPECT_EQ(testing::usage_error([&] { task->make_batch(0, 1, rng); }),
            "task max_retrieval(levels=256, base=16, classes=10): length 0 is outside its range; "
            "allowed: 1 to 256 (the n items have distinct priorities among 256 levels)");
  EXPECT_EQ(testing::usage_error([&] { task->make_batch(257, 1, rng); }),
            "task max_retrieval(levels=256, base=16, classes=10): length 257 is outside its "
            "range; allowed: 1 to 256 (the n items have distinct priorities among 256 levels)");
  EXPECT_EQ(
      testing::usage_error([] {
        testing::make("max_retrieval", {{"classes", int64_t{1}}});
      }),
      "task max_retrieval: parameter classes = 1 is outside its range; allowed: 2 to 1048576");
  EXPECT_EQ(testing::usage_error([] {
              testing::make("max_retrieval", {{"base", int64_t{1}}});
            }),
            "task max_retrieval: parameter base = 1 is outside its range; allowed: 2 to 1024");
}

TEST(TaskMaxRetrieval, MetricsOnHandMadeLogits) {
  const auto task = testing::make("max_retrieval");
  Rng rng(35);
  const int64_t n = 8, sequences = 200;
  const Batch batch = task->make_batch(n, sequences, rng);
  auto perfect = testing::score_all(*task, batch, [&](int64_t b, int64_t t, float* out) {
    testing::logits_from_target(batch, b, t, out, 1.0f, 0.0f);
  });
  EXPECT_EQ(perfect["accuracy"].value, 1.0);
  // The class of the first item: right exactly when its class is the top item's class.
  int64_t lucky = 0;
  auto first = testing::score_all(*task, batch, [&](int64_t b, int64_t t, float* out) {
    const int32_t cls = batch.token(b * batch.len, 2);
    lucky += batch.target_value(b * batch.len + t, cls) == 1.0f;
    for (int j = 0; j < batch.vocab; ++j) out[j] = j == cls ? 1.0f : 0.0f;
  });
  EXPECT_DOUBLE_EQ(first["accuracy"].value, static_cast<double>(lucky) / sequences);
  EXPECT_LT(lucky, sequences / 2);  // about (1/8)·1 + (7/8)·(1/10) ≈ 0.21 of them
}

}  // namespace
}  // namespace normlab
