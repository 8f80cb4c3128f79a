// The Chomsky-hierarchy tasks (src/tasks/chomsky/): every sample's answer recomputed from its
// input by the task's definition (docs/benchmarks/chomsky_hierarchy.md §2.2), the reference's
// hand-written examples of modular arithmetic, the layout of input, empty tokens and scored
// outputs, and the metric with its chance level 1/K.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "task_test_util.hpp"
#include "tasks/chomsky/modular_arithmetic.hpp"

namespace normlab {
namespace {

struct Case {
  std::string name;
  int input_ids, classes;
  // The expected answer for an input, written from the definition.
  std::function<std::vector<int32_t>(const std::vector<int32_t>&)> answer;
};

std::vector<Case> cases() {
  return {
      {"even_pairs", 2, 2,
       [](const std::vector<int32_t>& s) {  // even number of 01/10 pairs iff first == last
         return std::vector<int32_t>{s.front() != s.back()};
       }},
      {"parity_check", 2, 2,
       [](const std::vector<int32_t>& s) {
         return std::vector<int32_t>{static_cast<int32_t>(std::count(s.begin(), s.end(), 1) % 2)};
       }},
      {"cycle_navigation", 3, 5,
       [](const std::vector<int32_t>& s) {
         int p = 0;
         for (int32_t t : s) p = (p + (t == 0 ? 4 : t == 2 ? 1 : 0)) % 5;  // −1, 0, +1 mod 5
         return std::vector<int32_t>{p};
       }},
      {"reverse_string", 2, 2,
       [](const std::vector<int32_t>& s) { return std::vector<int32_t>(s.rbegin(), s.rend()); }},
      {"duplicate_string", 2, 2,
       [](const std::vector<int32_t>& s) {
         std::vector<int32_t> ss = s;
         ss.insert(ss.end(), s.begin(), s.end());
         return ss;
       }},
      {"odds_first", 2, 2,
       [](const std::vector<int32_t>& s) {  // the reference's code: s[1::2] + s[0::2]
         std::vector<int32_t> out;
         for (size_t t = 1; t < s.size(); t += 2) out.push_back(s[t]);
         for (size_t t = 0; t < s.size(); t += 2) out.push_back(s[t]);
         return out;
       }},
      {"bucket_sort", 5, 5,
       [](const std::vector<int32_t>& s) {
         std::vector<int32_t> out = s;
         std::stable_sort(out.begin(), out.end());
         return out;
       }},
      {"missing_duplicate_string", 4, 2,
       [](const std::vector<int32_t>& s) {  // the bit that makes the string ww again
         if (s.size() == 1) return std::vector<int32_t>{1};
         const size_t half = s.size() / 2;
         const size_t hidden = std::find(s.begin(), s.end(), 2) - s.begin();
         const size_t twin = hidden < half ? hidden + half : hidden - half;
         return std::vector<int32_t>{s[twin]};
       }},
      {"modular_arithmetic", 9, 5,
       [](const std::vector<int32_t>& s) {
         return std::vector<int32_t>{chomsky::modular_value(s)};
       }},
  };
}

TEST(TaskChomsky, EveryAnswerFollowsFromItsInput) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto task = testing::make(c.name);
    ASSERT_EQ(task->vocab(), c.input_ids + 1 + c.classes);
    const int32_t empty = c.input_ids;
    Rng rng(71);
    for (const int64_t L : {int64_t{1}, int64_t{2}, int64_t{7}, int64_t{40}, int64_t{41}}) {
      const Batch batch = task->make_batch(L, 64, rng);
      const int64_t T = batch.len;
      for (int64_t b = 0; b < batch.batch; ++b) {
        std::vector<int32_t> input, output;
        for (int64_t t = 0; t < T; ++t) {
          const int64_t n = b * T + t;
          if (batch.weight[n] == 0.0f) {
            ASSERT_TRUE(output.empty()) << "an input token after the outputs began";
            ASSERT_GE(batch.token(n), 0);
            ASSERT_LT(batch.token(n), c.input_ids);
            input.push_back(batch.token(n));
          } else {
            ASSERT_EQ(batch.token(n), empty);
            output.push_back(batch.target(n).most_likely() - (empty + 1));
          }
        }
        ASSERT_EQ(output, c.answer(input)) << "L = " << L;
        if (c.name == "missing_duplicate_string" && L > 1) {
          EXPECT_EQ(std::count(input.begin(), input.end(), 2), 1);
          EXPECT_EQ(input.back() == 3, L % 2 == 1);
        }
        if (c.name == "modular_arithmetic") {  // odd lengths; an even L shortened by one
          EXPECT_EQ(static_cast<int64_t>(input.size()), L % 2 == 1 ? L : L - 1);
          for (size_t t = 0; t < input.size(); ++t) {
            EXPECT_EQ(input[t] < 5, t % 2 == 0) << "digits at even positions";
          }
        } else {
          EXPECT_EQ(static_cast<int64_t>(input.size()), L);
        }
      }
    }
  }
}

// The reference's docstring: 1+2*3 = 2, 1-1-1 = 4, 0*1+4*3-2 = 0 (mod 5).
TEST(TaskChomsky, ModularArithmeticMatchesTheReferenceExamples) {
  using namespace chomsky;
  EXPECT_EQ(modular_value({1, kPlus, 2, kTimes, 3}), 2);
  EXPECT_EQ(modular_value({1, kMinus, 1, kMinus, 1}), 4);
  EXPECT_EQ(modular_value({0, kTimes, 1, kPlus, 4, kTimes, 3, kMinus, 2}), 0);
  EXPECT_EQ(modular_value({4}), 4);
}

// Logits that put the answer highest score 1; random logits score the chance 1/K, within 5
// standard deviations over 4000 sequences' tokens (the per-sequence means of L tokens have
// variance p(1 − p)/L, so this bound is looser for the sequence tasks, never tighter).
TEST(TaskChomsky, AccuracyAndItsChanceLevel) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto task = testing::make(c.name);
    Rng rng(72);
    const Batch batch = task->make_batch(9, 4000, rng);
    const int V = batch.vocab;
    MetricAccumulator right, random;
    std::vector<float> logits(batch.len * V);
    for (int64_t b = 0; b < batch.batch; ++b) {
      int64_t rows = 0;
      for (int64_t t = 0; t < batch.len; ++t) {
        const int64_t n = b * batch.len + t;
        if (batch.weight[n] == 0.0f) continue;
        const int32_t answer = batch.target(n).most_likely();
        for (int v = 0; v < V; ++v) {
          // Input tokens highest of all: the argmax is over the output classes only.
          logits[rows * V + v] = v == answer ? 1.0f : v <= c.input_ids ? 5.0f : 0.0f;
        }
        ++rows;
      }
      task->score(batch, b, logits.data(), right);
      for (float& x : logits) x = static_cast<float>(rng.uniform());
      task->score(batch, b, logits.data(), random);
    }
    EXPECT_EQ(right.results().at(0).value, 1.0);
    const double chance = 1.0 / c.classes;
    EXPECT_NEAR(random.results().at(0).value, chance, 5 * std::sqrt(chance * (1 - chance) / 4000));
  }
}

}  // namespace
}  // namespace normlab
