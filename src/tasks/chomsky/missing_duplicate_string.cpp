// missing_duplicate_string: w uniform on {0,1}^(L/2), ww with a uniformly chosen position replaced
// by 2, one padding 3 at the end when L is odd; the class is the hidden bit (L = 1: the input 1,
// class 1, as the reference's dummy). Reference: google-deepmind/neural_networks_chomsky_hierarchy
// tasks/cs/missing_duplicate_string.py (docs/benchmarks/chomsky_hierarchy.md §2.2). Definition:
// docs/tasks.md.
//
// Letters: L input length; input ids 0..3, output classes 0..1 (chomsky_task.hpp).
#include <vector>

#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class MissingDuplicateString final : public ChomskyTask {
 public:
  MissingDuplicateString() : ChomskyTask("missing_duplicate_string", 4, 2) {}
  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    if (L == 1) {  // the reference's dummy sample
      input.push_back(1);
      output.push_back(1);
      return;
    }
    const int64_t half = L / 2;
    for (int64_t t = 0; t < half; ++t) input.push_back(static_cast<int32_t>(rng.below(2)));
    for (int64_t t = 0; t < half; ++t) input.push_back(input[t]);
    const int64_t hidden = static_cast<int64_t>(rng.below(static_cast<uint64_t>(2 * half)));
    output.push_back(input[hidden]);
    input[hidden] = 2;
    if (L % 2 == 1) input.push_back(3);
  }
};

}  // namespace

TaskInfo missing_duplicate_string_info() {
  TaskInfo info;
  info.name = "missing_duplicate_string";
  info.summary =
      "ww with one bit hidden (token 2); output the hidden bit (Chomsky hierarchy, "
      "context-sensitive)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<MissingDuplicateString>();
  };
  return info;
}

}  // namespace normlab
