// set_complement(v): s distinct tokens of {1..v} in random order, then the query token 0;
// the answer at the query is the uniform distribution over the v − s absent tokens
// (docs/reference.md §6, arXiv 2510.08341). Definition and metrics: docs/tasks.md.
//
// Letters: T = s + 1 positions, V = v + 1.
#include <algorithm>

#include <fmt/format.h>

#include "normlab/base/errors.hpp"
#include "tasks/task_list.hpp"
#include "tasks/task_util.hpp"

namespace normlab {
namespace {

constexpr int32_t kComplementQuery = 0;

class SetComplement final : public Task {
 public:
  SetComplement(int v, bool sampled) : v_(v), sampled_(sampled) {}

  std::string label() const override {
    return fmt::format("set_complement(v={}, targets={})", v_,
                       sampled_ ? "sampled" : "distribution");
  }
  int vocab() const override { return v_ + 1; }
  LengthRange length_range() const override { return {1, v_ - 1, 1}; }
  std::string length_rule() const override {
    return fmt::format("s distinct tokens of 1..{} must leave at least one absent", v_);
  }
  int64_t sequence_length(int64_t n) const override { return n + 1; }

  void generate(int64_t s, Rng& rng, Batch& batch, int64_t b) const override {
    const int64_t T = s + 1;
    const int64_t row0 = b * T;
    task_util::DistinctSample sample(v_, s, rng);  // [0, s) the input, [s, v) the absent
    for (int64_t i = 0; i < s; ++i) {
      batch.token(row0 + i) = static_cast<int32_t>(sample[i] + 1);
      batch.weight[row0 + i] = 0.0f;
    }
    const int64_t q = row0 + s;
    batch.token(q) = kComplementQuery;
    if (sampled_) {
      batch.set_one_hot(q, static_cast<int32_t>(sample[s + rng.below(v_ - s)] + 1));
    } else {
      thread_local std::vector<int32_t> absent;
      absent.clear();
      for (int64_t i = s; i < v_; ++i) absent.push_back(static_cast<int32_t>(sample[i] + 1));
      batch.set_uniform(q, absent.data(), v_ - s);
    }
  }

  void score(const Batch& batch, int64_t b, const float* logits,
             MetricAccumulator& metrics) const override {
    const int V = batch.vocab;
    const int64_t T = batch.len, s = T - 1, row0 = b * T;
    // The uniform target over the absent tokens, whatever the training targets were.
    thread_local std::vector<int32_t> present, absent;  // both ascending
    present.clear();
    for (int64_t i = 0; i < s; ++i) present.push_back(batch.token(row0 + i));
    std::sort(present.begin(), present.end());
    absent.clear();
    for (int32_t j = 1, i = 0; j <= v_; ++j) {
      if (i < static_cast<int32_t>(s) && present[i] == j) {
        ++i;
      } else {
        absent.push_back(j);
      }
    }
    metrics.add_mean("tvd", task_util::tvd_uniform(logits, V, absent.data(),
                                                   static_cast<int64_t>(absent.size())));
    const int32_t best = task_util::argmax(logits, V);
    metrics.add_proportion("accuracy", std::binary_search(absent.begin(), absent.end(), best));
  }

  std::vector<std::string> metric_names() const override { return {"tvd", "accuracy"}; }

 private:
  int v_;
  bool sampled_;
};

}  // namespace

TaskInfo set_complement_info() {
  TaskInfo info;
  info.name = "set_complement";
  info.summary =
      "s distinct tokens of 1..v, then a query; predict the uniform distribution over the "
      "absent tokens (arXiv 2510.08341)";
  info.params = {
      {"v", int64_t{16}, {}, "vocabulary of set elements 1..v (model vocabulary v + 1)"},
      {"targets",
       std::string("distribution"),
       {"distribution", "sampled"},
       "training target: the uniform distribution over the absent tokens, or one absent token "
       "sampled anew each time (noisy one-hot)"},
  };
  info.make = [](const TaskParams& p) -> std::unique_ptr<Task> {
    const int64_t v = task_util::int_param(p, "set_complement", "v", 2, int64_t{1} << 20);
    return std::make_unique<SetComplement>(static_cast<int>(v),
                                           param_string(p, "targets") == "sampled");
  };
  return info;
}

}  // namespace normlab
