// dyck(k, m): next-token prediction on balanced strings over k bracket pairs with nesting depth
// ≤ m, sampled uniformly among all such strings of the requested length; the target at every
// position is uniform over the legal next tokens (arXiv 2510.08341). Definition: docs/tasks.md.
//
// Letters: n string length (even), T = n + 1 positions (BOS + string), V = 2k + 2.
#include "tasks/dyck.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "normlab/base/errors.hpp"
#include "tasks/task_list.hpp"
#include "tasks/task_util.hpp"

namespace normlab {
namespace dyck {

std::vector<int32_t> legal_next(const std::vector<int32_t>& prefix, int k, int m) {
  std::vector<int> stack;
  for (const int32_t tok : prefix) {
    if (tok >= opener(0) && tok < opener(k) && static_cast<int>(stack.size()) < m) {
      stack.push_back(tok - opener(0));
    } else if (!stack.empty() && tok == closer(k, stack.back())) {
      stack.pop_back();
    } else {
      throw std::logic_error(fmt::format("dyck: token {} is not legal here", tok));
    }
  }
  std::vector<int32_t> out;
  const int depth = static_cast<int>(stack.size());
  if (depth == 0) out.push_back(kEos);
  if (depth < m) {
    for (int i = 0; i < k; ++i) out.push_back(opener(i));
  }
  if (depth > 0) out.push_back(closer(k, stack.back()));
  return out;
}

OpenProbability::OpenProbability(int64_t n, int64_t m, bool force_table) {
  if (!force_table && 2 * m >= n) return;  // the bound never binds: closed form
  const int64_t M = std::min(m, n / 2);
  width_ = M / 2 + 1;
  p_.assign((n + 1) * width_, 0.0f);
  // Rows of completion counts D(r, ·), D(0, d) = [d = 0],
  // D(r, d) = D(r − 1, d + 1)·[d < M] + D(r − 1, d − 1)·[d > 0],
  // each row rescaled by its maximum: only ratios within a row are used, so nothing overflows.
  std::vector<double> prev(M + 1, 0.0), cur(M + 1, 0.0);
  prev[0] = 1.0;
  for (int64_t r = 1; r <= n; ++r) {
    std::fill(cur.begin(), cur.end(), 0.0);
    double top = 0.0;
    for (int64_t d = r % 2; d <= std::min(M, r); d += 2) {
      const double open = d < M ? prev[d + 1] : 0.0;
      const double close = d > 0 ? prev[d - 1] : 0.0;
      cur[d] = open + close;
      top = std::max(top, cur[d]);
      p_[r * width_ + d / 2] = cur[d] > 0.0 ? static_cast<float>(open / cur[d]) : 0.0f;
    }
    if (top > 0.0) {
      for (double& x : cur) x /= top;
    }
    std::swap(prev, cur);
  }
}

}  // namespace dyck

namespace {

using dyck::kBos;
using dyck::kEos;

class Dyck final : public Task {
 public:
  Dyck(int k, int m, bool sampled) : k_(k), m_(m), sampled_(sampled) {}

  std::string label() const override {
    return fmt::format("dyck(k={}, m={}, targets={})", k_, m_,
                       sampled_ ? "sampled" : "distribution");
  }
  int vocab() const override { return 2 * k_ + 2; }
  LengthRange length_range() const override { return {2, LengthRange{}.max, 2}; }
  std::string length_rule() const override {
    return "a balanced string has even length, and the empty string is excluded";
  }
  int64_t sequence_length(int64_t n) const override { return n + 1; }

  // The legal next tokens, ascending, after a prefix at `depth` whose innermost open bracket
  // has type `top`: EOS at depth 0, every opener below depth m, the matching closer above 0.
  void legal_tokens(int64_t depth, int top, std::vector<int32_t>& legal) const {
    legal.clear();
    if (depth == 0) legal.push_back(kEos);
    if (depth < m_) {
      for (int type = 0; type < k_; ++type) legal.push_back(dyck::opener(type));
    }
    if (depth > 0) legal.push_back(dyck::closer(k_, top));
  }

  // Target of position `row` after such a prefix: uniform over the legal next tokens.
  void set_legal(Batch& batch, int64_t row, int64_t depth, int top) const {
    thread_local std::vector<int32_t> legal;
    legal_tokens(depth, top, legal);
    batch.set_uniform(row, legal.data(), static_cast<int64_t>(legal.size()));
  }

  void generate(int64_t n, Rng& rng, Batch& batch, int64_t b) const override {
    const dyck::OpenProbability& open_p =
        tables_.get(n, [this](int64_t len) { return dyck::OpenProbability(len, m_); });
    thread_local std::vector<int> stack;  // types of the open brackets, innermost last
    stack.clear();
    const int64_t T = n + 1;
    const int64_t row0 = b * T;
    batch.token(row0) = kBos;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t depth = static_cast<int64_t>(stack.size());
      const int top = stack.empty() ? 0 : stack.back();
      if (!sampled_) set_legal(batch, row0 + t, depth, top);
      const double p = open_p(n - t, depth);
      const bool open = p >= 1.0 || (p > 0.0 && rng.uniform() < p);
      int32_t tok;
      if (open) {
        const int type = static_cast<int>(rng.below(k_));
        stack.push_back(type);
        tok = dyck::opener(type);
      } else {
        tok = dyck::closer(k_, top);
        stack.pop_back();
      }
      batch.token(row0 + t + 1) = tok;
      if (sampled_) batch.set_one_hot(row0 + t, tok);
    }
    if (sampled_) {
      batch.set_one_hot(row0 + n, kEos);
    } else {
      set_legal(batch, row0 + n, 0, 0);
    }
  }

  void score(const Batch& batch, int64_t b, const float* logits,
             MetricAccumulator& metrics) const override {
    const int V = batch.vocab;
    const int64_t T = batch.len, row0 = b * T;
    std::vector<int> stack;
    std::vector<int32_t> legal;
    double tvd_sum = 0;
    bool all_legal = true;
    for (int64_t t = 0; t < T; ++t) {
      // The uniform distribution over the legal next tokens after the prefix ending at t.
      legal_tokens(static_cast<int64_t>(stack.size()), stack.empty() ? 0 : stack.back(), legal);
      const float* row = logits + t * V;
      tvd_sum += task_util::tvd_uniform(row, V, legal.data(), static_cast<int64_t>(legal.size()));
      all_legal =
          all_legal && std::binary_search(legal.begin(), legal.end(), task_util::argmax(row, V));
      if (t + 1 == T) break;
      const int32_t next = batch.token(row0 + t + 1);
      if (next >= dyck::closer(k_, 0)) {
        stack.pop_back();
      } else {
        stack.push_back(next - dyck::opener(0));
      }
    }
    metrics.add_mean("tvd", tvd_sum / static_cast<double>(T));
    metrics.add_proportion("all_legal", all_legal);
  }

  std::vector<std::string> metric_names() const override { return {"tvd", "all_legal"}; }

 private:
  int k_;
  int m_;
  bool sampled_;
  task_util::LengthCache<dyck::OpenProbability> tables_;
};

}  // namespace

TaskInfo dyck_info() {
  TaskInfo info;
  info.name = "dyck";
  info.summary =
      "next-token prediction on uniform random balanced strings over k bracket pairs with depth "
      "<= m; targets uniform over the legal next tokens (arXiv 2510.08341)";
  info.params = {
      {"k", int64_t{2}, {}, "number of bracket pairs (model vocabulary 2k + 2)"},
      {"m", int64_t{4}, {}, "largest nesting depth"},
      {"targets",
       std::string("distribution"),
       {"distribution", "sampled"},
       "training target at each position: uniform over the legal next tokens, or the string's "
       "actual next token (EOS at the end)"},
  };
  info.make = [](const TaskParams& p) -> std::unique_ptr<Task> {
    const int64_t k = task_util::int_param(p, "dyck", "k", 1, int64_t{1} << 20);
    const int64_t m = task_util::int_param(p, "dyck", "m", 1, int64_t{1} << 30);
    return std::make_unique<Dyck>(static_cast<int>(k), static_cast<int>(m),
                                  param_string(p, "targets") == "sampled");
  };
  return info;
}

}  // namespace normlab
