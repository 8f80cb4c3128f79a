// parity_check: s uniform on {0,1}^L; the class is (number of 1s) mod 2. Reference:
// google-deepmind/neural_networks_chomsky_hierarchy tasks/regular/parity_check.py
// (docs/benchmarks/chomsky_hierarchy.md §2.2). Definition: docs/tasks.md.
//
// Letters: L input length; input ids 0..1, output classes 0..1 (chomsky_task.hpp).
#include <vector>

#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class ParityCheck final : public ChomskyTask {
 public:
  ParityCheck() : ChomskyTask("parity_check", 2, 2) {}
  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    int32_t ones = 0;
    for (int64_t t = 0; t < L; ++t) {
      input.push_back(static_cast<int32_t>(rng.below(2)));
      ones += input.back();
    }
    output.push_back(ones % 2);
  }
};

}  // namespace

TaskInfo parity_check_info() {
  TaskInfo info;
  info.name = "parity_check";
  info.summary =
      "a binary string; output the parity of its number of 1s (Chomsky hierarchy, regular)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<ParityCheck>();
  };
  return info;
}

}  // namespace normlab
