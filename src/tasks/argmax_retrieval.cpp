// argmax_retrieval(S, W): n items, each one position carrying two tokens (score, value); then a
// query position; the answer is the value of the item with the (unique) highest score
// (arXiv 2504.02827; two-field items as in Veličković et al., "softmax is not enough").
// Definition: docs/tasks.md.
//
// Letters: T = n + 1 positions, F = 2 fields, V = 1 + S + W.
#include <fmt/format.h>

#include "normlab/base/errors.hpp"
#include "tasks/query_answer_task.hpp"
#include "tasks/task_list.hpp"
#include "tasks/task_util.hpp"

namespace normlab {
namespace {

constexpr int32_t kArgmaxQuery = 0;

class ArgmaxRetrieval final : public QueryAnswerTask {
 public:
  ArgmaxRetrieval(int scores, int values) : scores_(scores), values_(values) {}

  std::string label() const override {
    return fmt::format("argmax_retrieval(scores={}, values={})", scores_, values_);
  }
  int vocab() const override { return 1 + scores_ + values_; }
  int fields() const override { return 2; }
  LengthRange length_range() const override { return {1, LengthRange{}.max, 1}; }
  int64_t sequence_length(int64_t n) const override { return n + 1; }

  int32_t score_token(int64_t s) const { return static_cast<int32_t>(1 + s); }
  int32_t value_token(int64_t w) const { return static_cast<int32_t>(1 + scores_ + w); }

  void generate(int64_t n, Rng& rng, Batch& batch, int64_t b) const override {
    const int64_t T = n + 1;
    const int64_t row0 = b * T;
    // A unique maximum: s_max ∈ {1..S−1} on one item, the others' scores below it.
    const int64_t s_max = 1 + static_cast<int64_t>(rng.below(scores_ - 1));
    const int64_t at = static_cast<int64_t>(rng.below(n));
    int32_t answer = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = i == at ? s_max : static_cast<int64_t>(rng.below(s_max));
      const int32_t value = value_token(static_cast<int64_t>(rng.below(values_)));
      batch.token(row0 + i, 0) = score_token(s);
      batch.token(row0 + i, 1) = value;
      batch.weight[row0 + i] = 0.0f;
      if (i == at) answer = value;
    }
    batch.token(row0 + n, 0) = kArgmaxQuery;
    batch.token(row0 + n, 1) = kNoToken;
    batch.set_one_hot(row0 + n, answer);
  }

 private:
  int scores_;
  int values_;
};

}  // namespace

TaskInfo argmax_retrieval_info() {
  TaskInfo info;
  info.name = "argmax_retrieval";
  info.summary =
      "n (score, value) items, then a query; output the value of the highest-scoring item "
      "(arXiv 2504.02827)";
  info.params = {
      {"scores", int64_t{16}, {}, "number of score tokens S (scores 0..S-1)"},
      {"values", int64_t{16}, {}, "number of value tokens W"},
  };
  info.make = [](const TaskParams& p) -> std::unique_ptr<Task> {
    const int64_t s = task_util::int_param(p, "argmax_retrieval", "scores", 2, int64_t{1} << 20);
    const int64_t w = task_util::int_param(p, "argmax_retrieval", "values", 1, int64_t{1} << 20);
    return std::make_unique<ArgmaxRetrieval>(static_cast<int>(s), static_cast<int>(w));
  };
  return info;
}

}  // namespace normlab
