// mqar(vocab, pairs, power_a, random_fill): multi-query associative recall as
// HazyResearch/zoology generates it (Arora et al., arXiv 2312.04927; the generator `multiquery_ar`,
// docs/benchmarks/mqar.md §2): k key-value pairs, then each key queried once at a slot drawn by
// a power law; the answer is the key's value, at the query position itself. Definition:
// docs/tasks.md.
//
// Letters: L = n positions (the task length), k pairs, V vocabulary; h = ⌊V/2⌋; keys 1..h−1,
// values h..V−1, filler 0.
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "normlab/base/errors.hpp"
#include "tasks/task_list.hpp"
#include "tasks/task_util.hpp"

namespace normlab {
namespace {

class Mqar final : public Task {
 public:
  Mqar(int vocab, int64_t pairs, double power_a, bool random_fill)
      : vocab_(vocab), pairs_(pairs), power_a_(power_a), random_fill_(random_fill) {}

  std::string label() const override {
    return fmt::format("mqar(vocab={}, pairs={}, power_a={}, random_fill={})", vocab_, pairs_,
                       power_a_, random_fill_ ? "on" : "off");
  }
  int vocab() const override { return vocab_; }
  // The generator's preconditions: L even, 4k ≤ L, V > L.
  LengthRange length_range() const override { return {4 * pairs_, vocab_ - 1, 2}; }
  std::string length_rule() const override {
    return fmt::format("zoology's generator: L even, L >= 4k = {}, L < V = {}", 4 * pairs_, vocab_);
  }
  int64_t sequence_length(int64_t n) const override { return n; }

  void generate(int64_t n, Rng& rng, Batch& batch, int64_t b) const override {
    const int64_t k = pairs_, row0 = b * n, half = vocab_ / 2;
    std::vector<int32_t> keys(k), values(k);
    {
      const task_util::DistinctSample s(half - 1, k, rng);  // keys 1..V/2−1
      for (int64_t j = 0; j < k; ++j) keys[j] = static_cast<int32_t>(1 + s[j]);
    }
    {
      // values V/2..V−1 (⌊V/2⌋ as the reference's vocab_size // 2): V − ⌊V/2⌋ of them
      const task_util::DistinctSample s(vocab_ - half, k, rng);
      for (int64_t j = 0; j < k; ++j) values[j] = static_cast<int32_t>(half + s[j]);
    }
    for (int64_t t = 0; t < n; ++t) {
      batch.token(row0 + t) =
          random_fill_ ? static_cast<int32_t>(rng.below(static_cast<uint64_t>(vocab_))) : 0;
      batch.weight[row0 + t] = 0.0f;
    }
    for (int64_t j = 0; j < k; ++j) {
      batch.token(row0 + 2 * j) = keys[j];
      batch.token(row0 + 2 * j + 1) = values[j];
    }
    // Key j is queried at position 2k + 2·g_j, its value the target there. The slots g are k
    // distinct draws from 0..space−1 with P(g) ∝ (g + 1)^(a − 1), without replacement
    // (numpy's choice(replace=False, p=p): successive draws, each renormalized over the slots
    // left).
    const int64_t space = (n - 2 * k) / 2;
    std::vector<double> weight(space);
    double total = 0;
    for (int64_t g = 0; g < space; ++g) {
      weight[g] = std::pow(static_cast<double>(g + 1), power_a_ - 1.0);
      total += weight[g];
    }
    for (int64_t j = 0; j < k; ++j) {
      double u = rng.uniform() * total;
      int64_t g = 0;
      while (g + 1 < space && (weight[g] == 0.0 || u >= weight[g])) {
        u -= weight[g];
        ++g;
      }
      while (weight[g] == 0.0) --g;  // u at the end by rounding: the last slot left
      total -= weight[g];
      weight[g] = 0.0;
      const int64_t t = 2 * k + 2 * g;
      batch.token(row0 + t) = keys[j];
      batch.set_one_hot(row0 + t, values[j]);
    }
  }

  // Accuracy over the labelled positions: the argmax over the whole vocabulary against the
  // value (zoology's metric).
  void score(const Batch& batch, int64_t b, const float* logits,
             MetricAccumulator& metrics) const override {
    int64_t row = 0;
    for (int64_t t = 0; t < batch.len; ++t) {
      const int64_t n = b * batch.len + t;
      if (batch.weight[n] <= 0.0f) continue;
      const int32_t answer = batch.target(n).most_likely();
      metrics.add_proportion("accuracy",
                             task_util::argmax(logits + row * batch.vocab, batch.vocab) == answer);
      ++row;
    }
  }
  std::vector<std::string> metric_names() const override { return {"accuracy"}; }

 private:
  int vocab_;
  int64_t pairs_;
  double power_a_;
  bool random_fill_;
};

}  // namespace

TaskInfo mqar_info() {
  TaskInfo info;
  info.name = "mqar";
  info.summary =
      "k key-value pairs, then each key queried once; output its value at the query "
      "(zoology's multi-query associative recall, arXiv 2312.04927)";
  info.params = {
      {"vocab", int64_t{8192}, {}, "vocabulary V: keys 1..V/2-1, values V/2..V-1, filler 0"},
      {"pairs", int64_t{4}, {}, "key-value pairs k per sequence (zoology's num_kv_pairs)"},
      {"power_a", 0.01, {}, "exponent a of the query slots' power law, P(g) ~ (g+1)^(a-1)"},
      {"random_fill",
       std::string("off"),
       {"off", "on"},
       "filler tokens uniform over the vocabulary (zoology's random_non_queries; off in its "
       "Figure 2 configs)"},
  };
  info.make = [](const TaskParams& p) -> std::unique_ptr<Task> {
    const int64_t v = task_util::int_param(p, "mqar", "vocab", 8, int64_t{1} << 20);
    const int64_t k = task_util::int_param(p, "mqar", "pairs", 1, v / 2 - 1);
    const double a = param_double(p, "power_a");
    if (!(a > 0.0 && a <= 1.0)) {
      throw UsageError(fmt::format(
          "task mqar: parameter power_a = {} is outside its range; allowed: 0 < a <= 1", a));
    }
    if (4 * k >= v) {
      throw UsageError(
          fmt::format("task mqar: pairs = {} needs sequences of at least 4k = {} tokens, which the "
                      "vocabulary {} must exceed; allowed: pairs below V/4",
                      k, 4 * k, v));
    }
    return std::make_unique<Mqar>(static_cast<int>(v), k, a,
                                  param_string(p, "random_fill") == "on");
  };
  return info;
}

}  // namespace normlab
