// dict_lookup(K, W): n (key, value) pairs with distinct keys, each one position carrying two
// tokens; then a query position carrying the query marker and one of the keys; the answer is
// that key's value (arXiv 2504.02827). Definition: docs/tasks.md.
//
// Letters: T = n + 1 positions, F = 2 fields, V = 1 + K + W.
#include <fmt/format.h>

#include "normlab/base/errors.hpp"
#include "tasks/query_answer_task.hpp"
#include "tasks/task_list.hpp"
#include "tasks/task_util.hpp"

namespace normlab {
namespace {

constexpr int32_t kLookupQuery = 0;

class DictLookup final : public QueryAnswerTask {
 public:
  DictLookup(int keys, int values) : keys_(keys), values_(values) {}

  std::string label() const override {
    return fmt::format("dict_lookup(keys={}, values={})", keys_, values_);
  }
  int vocab() const override { return 1 + keys_ + values_; }
  int fields() const override { return 2; }
  LengthRange length_range() const override { return {1, keys_, 1}; }
  std::string length_rule() const override {
    return fmt::format("the n keys are distinct among {} key tokens", keys_);
  }
  int64_t sequence_length(int64_t n) const override { return n + 1; }

  void generate(int64_t n, Rng& rng, Batch& batch, int64_t b) const override {
    const int64_t T = n + 1;
    const int64_t row0 = b * T;
    task_util::DistinctSample keys(keys_, n, rng);
    const int64_t asked = static_cast<int64_t>(rng.below(n));
    int32_t answer = 0;
    for (int64_t i = 0; i < n; ++i) {
      const auto value = static_cast<int32_t>(1 + keys_ + rng.below(values_));
      batch.token(row0 + i, 0) = static_cast<int32_t>(1 + keys[i]);
      batch.token(row0 + i, 1) = value;
      batch.weight[row0 + i] = 0.0f;
      if (i == asked) answer = value;
    }
    batch.token(row0 + n, 0) = kLookupQuery;
    batch.token(row0 + n, 1) = static_cast<int32_t>(1 + keys[asked]);
    batch.set_one_hot(row0 + n, answer);
  }

 private:
  int keys_;
  int values_;
};

}  // namespace

TaskInfo dict_lookup_info() {
  TaskInfo info;
  info.name = "dict_lookup";
  info.summary =
      "n (key, value) pairs with distinct keys, then a query key; output its value "
      "(arXiv 2504.02827)";
  info.params = {
      {"keys", int64_t{16384}, {}, "number of key tokens K (also the longest length)"},
      {"values", int64_t{16}, {}, "number of value tokens W"},
  };
  info.make = [](const TaskParams& p) -> std::unique_ptr<Task> {
    const int64_t k = task_util::int_param(p, "dict_lookup", "keys", 1, int64_t{1} << 24);
    const int64_t w = task_util::int_param(p, "dict_lookup", "values", 1, int64_t{1} << 20);
    return std::make_unique<DictLookup>(static_cast<int>(k), static_cast<int>(w));
  };
  return info;
}

}  // namespace normlab
