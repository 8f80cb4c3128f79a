// The Chomsky-hierarchy tasks (src/tasks/chomsky/): every sample's answer recomputed from its
// input by the task's definition (docs/benchmarks/chomsky_hierarchy.md §2.2), the reference's
// hand-written examples of modular arithmetic, the layout of input, empty tokens and scored
// outputs, and the metric with its chance level: 1/K for a random guess, and the accuracy of the
// best answer that does not read the input, which design rule D1 takes as the floor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "task_test_util.hpp"
#include "tasks/chomsky/bits.hpp"
#include "tasks/chomsky/blind_answer.hpp"
#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/chomsky/modular_arithmetic.hpp"

namespace normlab {
namespace {

// Little-endian bits of x without high zeros ({0} for 0), and the binary tasks' operands
// n 2 m (split false: no operator, n alone), at most 63 bits each.
std::vector<int32_t> bits_of(uint64_t x) {
  std::vector<int32_t> out;
  do {
    out.push_back(static_cast<int32_t>(x & 1));
    x >>= 1;
  } while (x != 0);
  return out;
}

struct Split {
  uint64_t n = 0, m = 0;
  bool split = false;
};

Split operands(const std::vector<int32_t>& s) {
  Split x;
  size_t i = 0;
  for (uint64_t w = 1; i < s.size() && s[i] != 2; ++i, w *= 2) x.n += w * s[i];
  if (i == s.size()) return x;
  x.split = true;
  for (uint64_t w = 1; ++i < s.size(); w *= 2) x.m += w * s[i];
  return x;
}

// answer, the termination class 2, then 0s to `length`.
std::vector<int32_t> ended(std::vector<int32_t> answer, size_t length) {
  answer.push_back(2);
  answer.resize(length, 0);
  return answer;
}

// The value mod 5 of a fully bracketed expression of tokens (digits 0..4, then the task's
// ids of + − * ( )), by recursive descent: operand := d | −d | ( operand [op operand] ).
struct Parser {
  const std::vector<int32_t>& s;
  int32_t plus, minus, times, open, close;
  size_t at = 0;

  int32_t operand() {
    if (s.at(at) == minus) {
      at += 2;
      return (5 - s[at - 1]) % 5;
    }
    if (s.at(at) != open) return s[at++];
    ++at;
    int32_t v = operand();
    if (s.at(at) != close) {
      const int32_t op = s[at++];
      const int32_t w = operand();
      v = op == plus ? (v + w) % 5 : op == minus ? (v - w + 5) % 5 : v * w % 5;
    }
    EXPECT_EQ(s.at(at), close);
    ++at;
    return v;
  }
};

struct ChomskyCase {
  std::string name;
  int input_ids, classes;
  // The expected answer for an input, written from the definition.
  std::function<std::vector<int32_t>(const std::vector<int32_t>&)> answer;
};

std::vector<ChomskyCase> chomsky_cases() {
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
      {"binary_addition", 3, 3,
       [](const std::vector<int32_t>& s) {
         const auto [n, m, split] = operands(s);
         return ended(bits_of(split ? n + m : n), s.size() + 1);
       }},
      {"binary_multiplication", 3, 3,
       [](const std::vector<int32_t>& s) {
         const auto [n, m, split] = operands(s);
         if (!split) return ended(s.size() == 1 ? std::vector<int32_t>{} : bits_of(0), s.size());
         return ended(bits_of(n * m), s.size());
       }},
      {"compute_sqrt", 2, 2,
       [](const std::vector<int32_t>& s) {  // big-endian in and out, ⌈L/2⌉ bits
         uint64_t n = 0;
         for (int32_t b : s) n = 2 * n + b;
         uint64_t r = 0;
         while ((r + 1) * (r + 1) <= n) ++r;
         std::vector<int32_t> out((s.size() + 1) / 2);
         for (size_t i = 0; i < out.size(); ++i) out[out.size() - 1 - i] = (r >> i) & 1;
         return out;
       }},
      {"stack_manipulation", 5, 3,
       [](const std::vector<int32_t>& s) {  // the leading bits are the stack, bottom first
         std::vector<int32_t> stack;
         size_t i = 0;
         while (i < s.size() && s[i] < 2) stack.push_back(s[i++]);
         for (; i < s.size(); ++i) {
           if (s[i] == 2 && !stack.empty()) stack.pop_back();
           if (s[i] >= 3) stack.push_back(s[i] - 3);
         }
         std::vector<int32_t> out(stack.rbegin(), stack.rend());
         return ended(out, s.size() + 1);
       }},
      {"modular_arithmetic_brackets", 11, 5,
       [](const std::vector<int32_t>& s) {
         Parser p{s, 5, 6, 7, 8, 9};
         const int32_t v = p.operand();
         EXPECT_EQ(p.at, s.size()) << "the whole input is one expression";
         return std::vector<int32_t>{v};
       }},
      {"solve_equation", 11, 5,
       [](const std::vector<int32_t>& s) {  // the digit for x that makes the equation hold
         if (s.size() < 3) return std::vector<int32_t>{0};
         EXPECT_EQ(s[s.size() - 2], 10) << "=";
         EXPECT_EQ(std::count(s.begin(), s.end(), 9), 1) << "one x";
         std::vector<int32_t> solutions;
         for (int32_t d = 0; d < 5; ++d) {
           std::vector<int32_t> e(s.begin(), s.end() - 2);
           std::replace(e.begin(), e.end(), 9, d);
           Parser p{e, 5, 6, -1, 7, 8};
           if (p.operand() == s.back()) solutions.push_back(d);
         }
         EXPECT_EQ(solutions.size(), 1u) << "x is determined (+ and − only)";
         return solutions;
       }},
      {"modular_arithmetic", 9, 5,
       [](const std::vector<int32_t>& s) {
         return std::vector<int32_t>{chomsky::modular_value(s)};
       }},
  };
}

TEST(TaskChomsky, EveryAnswerFollowsFromItsInput) {
  for (const ChomskyCase& c : chomsky_cases()) {
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
// standard deviations over 4000 sequences' tokens (the pooled positions number 4000 or more,
// so this bound is looser for the sequence tasks, never tighter).
TEST(TaskChomsky, AccuracyAndItsChanceLevel) {
  for (const ChomskyCase& c : chomsky_cases()) {
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

// The accuracy, through score(), of answering `answer[o]` at output position o of each of the
// batch's sequences: the pooled value, and the standard error of a mean over the sequences
// from their own accuracies' spread (a sequence's positions may be correlated: bucket_sort's
// sorted output).
struct PositionAnswerScore {
  double value = 0, standard_error = 0;
};
PositionAnswerScore score_position_answer(const Task& task, const ChomskyTask& chomsky,
                                          const Batch& batch, const std::vector<int32_t>& answer) {
  const int V = batch.vocab;
  const int64_t O = static_cast<int64_t>(answer.size());
  std::vector<float> logits(batch.len * V, 0.0f);
  for (int64_t o = 0; o < O; ++o) logits[o * V + chomsky.class_token(answer[o])] = 1.0f;
  MetricAccumulator pooled;
  double sum = 0, sum_sq = 0;
  for (int64_t b = 0; b < batch.batch; ++b) {
    MetricAccumulator one;
    task.score(batch, b, logits.data(), one);
    task.score(batch, b, logits.data(), pooled);
    const double a = one.results().at(0).value;
    sum += a;
    sum_sq += a * a;
  }
  const double n = static_cast<double>(batch.batch), mean = sum / n;
  const double variance = std::max(0.0, (sum_sq - n * mean * mean) / (n - 1));
  return {pooled.results().at(0).value, std::sqrt(variance / n)};
}

// The most frequent class at each output position of the batch's sequences, where scored (up to
// and including the end class, in the tasks that have one).
std::vector<int32_t> most_frequent_per_position(const ChomskyTask& chomsky, const Batch& batch,
                                                int64_t O) {
  const int K = chomsky.output_classes();
  std::vector<int64_t> count(O * K, 0);
  for (int64_t b = 0; b < batch.batch; ++b) {
    for (int64_t o = 0; o < O; ++o) {
      const int64_t n = b * batch.len + batch.len - O + o;
      const int32_t k = batch.target(n).most_likely() - chomsky.class_token(0);
      ++count[o * K + k];
      if (k == chomsky.termination_class()) break;
    }
  }
  std::vector<int32_t> answer(O);
  for (int64_t o = 0; o < O; ++o) {
    const auto first = count.begin() + o * K;
    answer[o] = static_cast<int32_t>(std::max_element(first, first + K) - first);
  }
  return answer;
}

// BlindAnswer on 500 sequences of length 41: its classes are the most frequent class at each
// output position (counted here from the batch's targets), its accuracy is what score() gives
// those classes on the same sequences, and no single change of one position's class scores
// more there. On 2000 other sequences it scores at least 1/K (within 5 standard errors, the
// spread of the sequences' accuracies); about ½ on the three tasks whose classes are two bits
// and a rare end class, far above 1/K = ⅓; above 1/5 on modular arithmetic with brackets, whose
// class 0 is the most frequent.
TEST(TaskChomsky, BlindAnswerIsTheBestAnswerThatDoesNotReadTheInput) {
  constexpr int64_t L = 41;
  for (const ChomskyCase& c : chomsky_cases()) {
    SCOPED_TRACE(c.name);
    const auto task = testing::make(c.name);
    const auto* chomsky = dynamic_cast<const ChomskyTask*>(task.get());
    ASSERT_NE(chomsky, nullptr);
    Rng fit(75), measure(76);
    const Batch fitted_on = task->make_batch(L, 500, fit);
    const int64_t O = chomsky->output_length(chomsky->input_length(L));
    BlindAnswer blind(*chomsky, L);
    blind.add(fitted_on);
    const std::vector<int32_t> answer = blind.classes();
    EXPECT_EQ(answer, most_frequent_per_position(*chomsky, fitted_on, O));
    EXPECT_DOUBLE_EQ(blind.accuracy(),
                     score_position_answer(*task, *chomsky, fitted_on, answer).value);
    for (int64_t o = 0; o < O; ++o) {
      for (int32_t k = 0; k < c.classes; ++k) {
        std::vector<int32_t> other = answer;
        other[o] = k;
        EXPECT_LE(score_position_answer(*task, *chomsky, fitted_on, other).value, blind.accuracy())
            << "position " << o << ", class " << k;
      }
    }
    const PositionAnswerScore s =
        score_position_answer(*task, *chomsky, task->make_batch(L, 2000, measure), answer);
    EXPECT_GE(s.value, 1.0 / c.classes - 5 * s.standard_error);
    if (c.name == "stack_manipulation" || c.name == "binary_addition" ||
        c.name == "binary_multiplication") {
      EXPECT_GT(s.value, 0.45);
    }
    if (c.name == "modular_arithmetic_brackets") {
      EXPECT_GT(s.value, 0.25);
    }
    EXPECT_THROW(blind.add(task->make_batch(L + 2, 1, fit)), std::logic_error);
  }
}

// P(Bin(n, p) <= k), summed in log space.
double binomial_cdf(int64_t n, double p, int64_t k) {
  double sum = 0;
  for (int64_t i = 0; i <= k; ++i) {
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) +
                    i * std::log(p) + (n - i) * std::log1p(-p));
  }
  return sum;
}

// bucket_sort's output is its L symbols (uniform on 5) sorted, so position o holds symbol v
// when fewer than o + 1 symbols are below v and at least o + 1 are at most v:
// P = F_{v/5}(o) − F_{(v+1)/5}(o) with F_p the CDF of Bin(L, p). Answering each position's
// likeliest v scores the mean over o of max_v P, far above the constant answer's 1/5:
// 0.7796 at L = 41, 0.9365 at L = 500. The blind answer fitted on 1024 sequences scores that on
// 2000 others within 5 standard errors (the spread of their accuracies): a fit can miss a
// position's likeliest symbol only where two symbols nearly tie, which costs far less.
TEST(TaskChomsky, BucketSortBlindAnswerIsEachPositionsLikeliestSymbol) {
  const auto task = testing::make("bucket_sort");
  const auto* chomsky = dynamic_cast<const ChomskyTask*>(task.get());
  ASSERT_NE(chomsky, nullptr);
  for (const int64_t L : {41, 500}) {
    SCOPED_TRACE(L);
    double sum = 0;
    for (int64_t o = 0; o < L; ++o) {
      double best = 0;
      for (int v = 0; v < 5; ++v) {
        const double below = v == 0 ? 1.0 : binomial_cdf(L, v / 5.0, o);
        const double at_most = v == 4 ? 0.0 : binomial_cdf(L, (v + 1) / 5.0, o);
        best = std::max(best, below - at_most);
      }
      sum += best;
    }
    const double exact = sum / static_cast<double>(L);
    EXPECT_GT(exact, L == 41 ? 0.77 : 0.93);
    Rng fit(77), measure(78);
    BlindAnswer blind(*chomsky, L);
    blind.add(task->make_batch(L, 1024, fit));
    const PositionAnswerScore s =
        score_position_answer(*task, *chomsky, task->make_batch(L, 2000, measure), blind.classes());
    EXPECT_NEAR(s.value, exact, 5 * s.standard_error);
  }
}

// The accuracy pools the scored positions of a length's sequences, as the reference's
// sum(mask · correct) / sum(mask): a sequence of m0 scored positions all right and one of m1
// all wrong give m0 / (m0 + m1), not the per-sequence mean 1/2. Positions after the end
// class are not scored, even when wrong.
TEST(TaskChomsky, AccuracyPoolsTheScoredPositions) {
  for (const char* name : {"stack_manipulation", "binary_addition", "binary_multiplication"}) {
    SCOPED_TRACE(name);
    const auto task = testing::make(name);
    Rng rng(74);
    const Batch batch = task->make_batch(12, 64, rng);
    const int V = batch.vocab;
    // Per sequence: its scored rows' targets, and how many rows the mask keeps (up to and
    // including the first end class: class 2 of the three tasks' K = 3, the last id).
    auto targets = [&](int64_t b) {
      std::vector<int32_t> out;
      for (int64_t t = 0; t < batch.len; ++t) {
        const int64_t n = b * batch.len + t;
        if (batch.weight[n] > 0.0f) out.push_back(batch.target(n).most_likely());
      }
      return out;
    };
    const int32_t end_token = V - 1;
    auto masked = [&](const std::vector<int32_t>& y) {
      size_t m = 0;
      while (m < y.size() && y[m] != end_token) ++m;
      return m + 1;
    };
    int64_t b0 = 0, b1 = -1;
    for (int64_t b = 1; b < batch.batch && b1 < 0; ++b) {
      if (masked(targets(b)) != masked(targets(b0))) b1 = b;
    }
    ASSERT_GE(b1, 0) << "no two sequences with different answer lengths";
    const size_t m0 = masked(targets(b0)), m1 = masked(targets(b1));
    // Right logits for b0 up to its end class, wrong after it; wrong everywhere for b1.
    auto logits_for = [&](const std::vector<int32_t>& y, size_t right_rows) {
      std::vector<float> logits(y.size() * V, 0.0f);
      for (size_t r = 0; r < y.size(); ++r) {
        const int32_t wrong = y[r] == V - 1 ? V - 2 : V - 1;
        logits[r * V + (r < right_rows ? y[r] : wrong)] = 1.0f;
      }
      return logits;
    };
    MetricAccumulator metrics;
    const std::vector<float> l0 = logits_for(targets(b0), m0), l1 = logits_for(targets(b1), 0);
    task->score(batch, b0, l0.data(), metrics);
    task->score(batch, b1, l1.data(), metrics);
    const MetricResult r = metrics.results().at(0);
    EXPECT_EQ(r.count, static_cast<int64_t>(m0 + m1));
    EXPECT_DOUBLE_EQ(r.value, static_cast<double>(m0) / static_cast<double>(m0 + m1));
    EXPECT_NE(r.value, 0.5);
  }
}

// The bit-vector integers agree with 64-bit arithmetic, and isqrt is exact at squares of
// numbers beyond 64 bits.
TEST(TaskChomsky, BitIntegersAreExact) {
  Rng rng(73);
  auto to_bits = [](uint64_t x, size_t len) {
    chomsky::Bits b(len);
    for (size_t i = 0; i < len; ++i) b[i] = static_cast<int32_t>((x >> i) & 1);
    return b;
  };
  for (int k = 0; k < 2000; ++k) {
    const uint64_t a = rng.below(uint64_t{1} << 31), b = rng.below(uint64_t{1} << 31);
    EXPECT_EQ(chomsky::add(to_bits(a, 33), to_bits(b, 31)), bits_of(a + b));
    EXPECT_EQ(chomsky::multiply(to_bits(a, 31), to_bits(b, 32)), bits_of(a * b));
    uint64_t r = static_cast<uint64_t>(std::sqrt(static_cast<double>(a * b)));
    while (r * r > a * b) --r;
    while ((r + 1) * (r + 1) <= a * b) ++r;
    EXPECT_EQ(chomsky::isqrt(to_bits(a * b, 62)), bits_of(r));
  }
  // (2^100 + 3)^2 and one less: roots 2^100 + 3 and 2^100 + 2.
  chomsky::Bits root(101, 0);
  root[0] = root[1] = root[100] = 1;
  const chomsky::Bits square = chomsky::multiply(root, root);
  EXPECT_EQ(chomsky::isqrt(square), root);
  chomsky::Bits less = square;  // square − 1: clear the lowest 1 and set the bits below it
  size_t i = 0;
  while (less[i] == 0) less[i++] = 1;
  less[i] = 0;
  chomsky::Bits below = root;
  below[0] = 0;  // 2^100 + 2
  EXPECT_EQ(chomsky::isqrt(less), below);
}

}  // namespace
}  // namespace normlab
