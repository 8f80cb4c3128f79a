// max_retrieval(P, b, C): n items with distinct priority levels (drawn without replacement from
// 0..P−1) and i.i.d. uniform classes (0..C−1), then a query; the answer is the class of the
// item with the highest priority. Maximum Retrieval of Veličković et al., "softmax is not
// enough" (arXiv 2410.01104, Appendix A), as cited by arXiv 2510.08341, with the continuous
// priority replaced by P levels. Definition and choices: docs/tasks.md.
//
// Each item is one position with F = m + 1 fields: its priority written in base b with m digits
// (most significant first; digit j has its own b tokens), then its class. The embedding sums
// the fields, so a linear function of it can score an item by its exact priority
// Σ_j digit_j · b^(m−1−j).
//
// Letters: T = n + 1 positions, F = m + 1 fields, V = 1 + m·b + C.
#include <fmt/format.h>

#include "tasks/query_answer_task.hpp"
#include "tasks/task_list.hpp"
#include "tasks/task_util.hpp"

namespace normlab {
namespace {

constexpr int32_t kMaxQuery = 0;

// The number of base-b digits that write every level below P (at least 1).
int digits_for(int64_t levels, int64_t base) {
  int m = 1;
  for (int64_t span = base; span < levels; span *= base) ++m;
  return m;
}

class MaxRetrieval final : public QueryAnswerTask {
 public:
  MaxRetrieval(int levels, int base, int classes)
      : levels_(levels), base_(base), classes_(classes), digits_(digits_for(levels, base)) {}

  std::string label() const override {
    return fmt::format("max_retrieval(levels={}, base={}, classes={})", levels_, base_, classes_);
  }
  int vocab() const override { return 1 + digits_ * base_ + classes_; }
  int fields() const override { return digits_ + 1; }
  // Distinct levels: at most P items.
  LengthRange length_range() const override { return {1, levels_, 1}; }
  std::string length_rule() const override {
    return fmt::format("the n items have distinct priorities among {} levels", levels_);
  }
  int64_t sequence_length(int64_t n) const override { return n + 1; }

  void generate(int64_t n, Rng& rng, Batch& batch, int64_t b) const override {
    const int64_t T = n + 1;
    const int64_t row0 = b * T;
    task_util::DistinctSample levels(levels_, n, rng);  // (n) distinct, random order
    int64_t best_level = -1;
    int32_t answer = 0;  // the class token of the item with level best_level
    for (int64_t i = 0; i < n; ++i) {
      const int64_t level = levels[i];
      int64_t rest = level;
      for (int j = digits_ - 1; j >= 0; --j) {
        batch.token(row0 + i, j) = static_cast<int32_t>(1 + j * base_ + rest % base_);
        rest /= base_;
      }
      const int32_t cls = class_token(static_cast<int64_t>(rng.below(classes_)));
      batch.token(row0 + i, digits_) = cls;
      batch.weight[row0 + i] = 0.0f;
      if (level > best_level) {
        best_level = level;
        answer = cls;
      }
    }
    batch.token(row0 + n, 0) = kMaxQuery;
    for (int f = 1; f <= digits_; ++f) batch.token(row0 + n, f) = kNoToken;
    batch.set_one_hot(row0 + n, answer);
  }

 private:
  int32_t class_token(int64_t c) const { return static_cast<int32_t>(1 + digits_ * base_ + c); }

  int levels_;
  int base_;
  int classes_;
  int digits_;
};

}  // namespace

TaskInfo max_retrieval_info() {
  TaskInfo info;
  info.name = "max_retrieval";
  info.summary =
      "n items (distinct priority level, class), then a query; output the class of the "
      "highest-priority item (arXiv 2410.01104 App. A, via 2510.08341)";
  info.params = {
      {"levels",
       int64_t{256},
       {},
       "priority levels P (0..P-1, distinct within a sequence; n <= P)"},
      {"base", int64_t{16}, {}, "priorities are written in base b, one field per digit"},
      {"classes", int64_t{10}, {}, "number of classes C (chance accuracy 1/C)"},
  };
  info.make = [](const TaskParams& p) -> std::unique_ptr<Task> {
    const int64_t levels = task_util::int_param(p, "max_retrieval", "levels", 1, int64_t{1} << 20);
    const int64_t base = task_util::int_param(p, "max_retrieval", "base", 2, 1024);
    const int64_t classes =
        task_util::int_param(p, "max_retrieval", "classes", 2, int64_t{1} << 20);
    return std::make_unique<MaxRetrieval>(static_cast<int>(levels), static_cast<int>(base),
                                          static_cast<int>(classes));
  };
  return info;
}

}  // namespace normlab
