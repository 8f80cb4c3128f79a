// max_retrieval(v): n tokens drawn i.i.d. uniformly from {1..v}, then the query token 0; the
// answer at the query is the largest input token (arXiv 2510.08341). Definition: docs/tasks.md.
//
// Letters: T = n + 1 positions, V = v + 1.
#include <algorithm>

#include <fmt/format.h>

#include "normlab/errors.hpp"
#include "tasks/query_answer_task.hpp"
#include "tasks/task_list.hpp"
#include "tasks/task_util.hpp"

namespace normlab {
namespace {

constexpr int32_t kQuery = 0;

class MaxRetrieval final : public QueryAnswerTask {
 public:
  explicit MaxRetrieval(int v) : v_(v) {}

  std::string label() const override { return fmt::format("max_retrieval(v={})", v_); }
  int vocab() const override { return v_ + 1; }
  LengthRange length_range() const override { return {1, LengthRange{}.max, 1}; }
  int64_t sequence_length(int64_t n) const override { return n + 1; }

  void generate(int64_t n, Rng& rng, Batch& batch, int64_t b) const override {
    const int64_t T = n + 1;
    const int64_t row0 = b * T;
    int32_t best = 0;
    for (int64_t i = 0; i < n; ++i) {
      const auto tok = static_cast<int32_t>(1 + rng.below(v_));
      batch.token(row0 + i) = tok;
      batch.weight[row0 + i] = 0.0f;
      best = std::max(best, tok);
    }
    batch.token(row0 + n) = kQuery;
    batch.set_one_hot(row0 + n, best);
  }

 private:
  int v_;
};

}  // namespace

TaskInfo max_retrieval_info() {
  TaskInfo info;
  info.name = "max_retrieval";
  info.summary =
      "n tokens drawn uniformly from 1..v, then a query; output the largest (arXiv 2510.08341)";
  info.params = {
      {"v", int64_t{64}, {}, "tokens are drawn from 1..v (model vocabulary v + 1)"},
  };
  info.make = [](const TaskParams& p) -> std::unique_ptr<Task> {
    const int64_t v = task_util::int_param(p, "max_retrieval", "v", 1, int64_t{1} << 20);
    return std::make_unique<MaxRetrieval>(static_cast<int>(v));
  };
  return info;
}

}  // namespace normlab
