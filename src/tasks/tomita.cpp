// tomita(n): classification of strings over {a, b} by Tomita language n (Tomita 1982), with
// accepted and rejected strings balanced at every length and each drawn uniformly among the
// strings of its class (arXiv 2510.08341). Definition: docs/tasks.md.
//
// Letters: L string length, T = L + 1 positions (string + query), V = 5.
#include "tasks/tomita.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "normlab/base/errors.hpp"
#include "tasks/task_list.hpp"
#include "tasks/task_util.hpp"

namespace normlab {
namespace tomita {
namespace {

// Index 0 is a (the classic 1), index 1 is b (the classic 0).
const Dfa kDfas[7] = {
    {2, {{0, 1}, {1, 1}}, {true, false}, "T1 = a*"},
    {3, {{1, 2}, {2, 0}, {2, 2}}, {true, false, false}, "T2 = (ab)*"},
    // 0: start / even a-run / b's after an even a-run; 1: odd a-run; 2: even b-run after an odd
    // a-run; 3: odd b-run after an odd a-run (rejecting); 4: dead.
    {5,
     {{1, 0}, {0, 3}, {1, 3}, {4, 2}, {4, 4}},
     {true, true, true, false, false},
     "T3 = no odd-length maximal a-run immediately followed by an odd-length maximal b-run"},
    {4, {{0, 1}, {0, 2}, {0, 3}, {3, 3}}, {true, true, true, false}, "T4 = no bbb substring"},
    // State = (#a mod 2) + 2·(#b mod 2).
    {4,
     {{1, 2}, {0, 3}, {3, 0}, {2, 1}},
     {true, false, false, false},
     "T5 = even number of a's and even number of b's"},
    // State = (#a − #b) mod 3.
    {3, {{1, 2}, {2, 0}, {0, 1}}, {true, false, false}, "T6 = #a - #b = 0 (mod 3)"},
    {5, {{1, 0}, {1, 2}, {3, 2}, {3, 4}, {4, 4}}, {true, true, true, true, false}, "T7 = b*a*b*a*"},
};

}  // namespace

const Dfa& dfa(int n) {
  if (n < 1 || n > 7) throw std::logic_error("tomita: language must be 1..7");
  return kDfas[n - 1];
}

bool accepts(int n, const std::string& word) {
  const Dfa& d = dfa(n);
  int q = 0;
  for (const char c : word) {
    if (c != 'a' && c != 'b') throw std::logic_error("tomita: letters are a and b");
    q = d.next[q][c == 'a' ? 0 : 1];
  }
  return d.accept[q];
}

}  // namespace tomita

namespace {

using tomita::kA;
using tomita::kAccept;
using tomita::kB;
using tomita::kQuery;
using tomita::kReject;

// P(next letter is a | class, r letters to come, state q) for strings of one length, drawn
// uniformly among the strings of a class. Completion counts C_c(r, q): C_c(0, q) = [accept(q)
// = c], C_c(r, q) = C_c(r − 1, δ(q, a)) + C_c(r − 1, δ(q, b)); each row is rescaled by its
// maximum, since only ratios within a row are used.
struct LetterTable {
  int states = 0;
  int64_t len = 0;
  std::vector<double> p_a;  // (2 classes, len + 1, states)

  LetterTable(const tomita::Dfa& dfa, int64_t n) : states(dfa.states), len(n) {
    p_a.assign(2 * (n + 1) * states, 0.0);
    for (int c = 0; c < 2; ++c) {
      std::vector<double> prev(states), cur(states);
      for (int q = 0; q < states; ++q) prev[q] = dfa.accept[q] == (c == 1) ? 1.0 : 0.0;
      for (int64_t r = 1; r <= n; ++r) {
        double top = 0.0;
        for (int q = 0; q < states; ++q) {
          const double a = prev[dfa.next[q][0]], b = prev[dfa.next[q][1]];
          cur[q] = a + b;
          top = std::max(top, cur[q]);
          p_a[(c * (n + 1) + r) * states + q] = cur[q] > 0.0 ? a / cur[q] : 0.0;
        }
        if (top > 0.0) {
          for (double& x : cur) x /= top;
        }
        std::swap(prev, cur);
      }
      // prev is row n: the start state must have strings of this class.
      if (!(prev[0] > 0.0)) {
        throw std::logic_error(fmt::format("tomita: no strings of class {} at length {}", c, n));
      }
    }
  }
  double operator()(int c, int64_t r, int q) const { return p_a[(c * (len + 1) + r) * states + q]; }
};

class Tomita final : public Task {
 public:
  explicit Tomita(int language) : language_(language), dfa_(tomita::dfa(language)) {}

  std::string label() const override { return fmt::format("tomita(n={})", language_); }
  int vocab() const override { return tomita::kVocab; }
  LengthRange length_range() const override {
    constexpr int64_t kMax = LengthRange{}.max;
    switch (language_) {
      case 1:
        return {1, kMax, 1};
      case 2:
        return {2, kMax, 2};
      case 3:
        return {2, kMax, 1};
      case 4:
        return {3, kMax, 1};
      case 5:
        return {2, kMax, 2};
      case 6:
        return {2, kMax, 1};
      default:
        return {4, kMax, 1};
    }
  }
  std::string length_rule() const override {
    switch (language_) {
      case 1:
        return "T1 = a*: the empty string has no rejected counterpart";
      case 2:
        return "T2 = (ab)*: no string of odd length is accepted";
      case 3:
        return "T3: both strings of length 1 are accepted";
      case 4:
        return "T4 = no bbb: every string shorter than 3 is accepted";
      case 5:
        return "T5 = even #a and even #b: no string of odd length is accepted";
      case 6:
        return "T6 = #a - #b = 0 (mod 3): no string of length 1 is accepted";
      default:
        return "T7 = b*a*b*a*: every string shorter than 4 is accepted";
    }
  }
  int64_t sequence_length(int64_t n) const override { return n + 1; }

  void generate(int64_t n, Rng& rng, Batch& batch, int64_t b) const override {
    const LetterTable& table =
        tables_.get(n, [this](int64_t len) { return LetterTable(dfa_, len); });
    const int64_t row0 = b * (n + 1);
    const int c = static_cast<int>(rng.below(2));  // 1 = accepted
    int q = 0;
    for (int64_t t = 0; t < n; ++t) {
      const double p = table(c, n - t, q);
      const int letter = p >= 1.0 ? 0 : p <= 0.0 ? 1 : (rng.uniform() < p ? 0 : 1);
      q = dfa_.next[q][letter];
      batch.token(row0 + t) = letter == 0 ? kA : kB;
      batch.weight[row0 + t] = 0.0f;
    }
    batch.token(row0 + n) = kQuery;
    batch.set_one_hot(row0 + n, c == 1 ? kAccept : kReject);
  }

  void score(const Batch& batch, int64_t b, const float* logits,
             MetricAccumulator& metrics) const override {
    const int64_t q = b * batch.len + batch.len - 1;
    const bool positive = batch.target_value(q, kAccept) > 0.5f;
    const double margin = static_cast<double>(logits[kAccept]) - logits[kReject];
    metrics.add_auc("roc_auc", margin, positive);
    // argmax over {accept, reject}; a tie goes to accept (the lower token id).
    metrics.add_proportion("accuracy", (margin >= 0.0) == positive);
  }

  std::vector<std::string> metric_names() const override { return {"roc_auc", "accuracy"}; }

 private:
  int language_;
  const tomita::Dfa& dfa_;
  task_util::LengthCache<LetterTable> tables_;
};

}  // namespace

TaskInfo tomita_info() {
  TaskInfo info;
  info.name = "tomita";
  info.summary =
      "classify strings over {a, b} by Tomita language n (1..7), accepted and rejected "
      "balanced at every length (Tomita 1982; arXiv 2510.08341)";
  info.params = {
      {"n", int64_t{3}, {}, "which Tomita language, 1..7 (docs/tasks.md gives each definition)"},
  };
  info.make = [](const TaskParams& p) -> std::unique_ptr<Task> {
    return std::make_unique<Tomita>(static_cast<int>(task_util::int_param(p, "tomita", "n", 1, 7)));
  };
  return info;
}

}  // namespace normlab
