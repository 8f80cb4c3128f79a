// cycle_navigation: tokens uniform on {0,1,2}, token t a move of t − 1; the class is the sum of the
// moves mod 5. Reference: google-deepmind/neural_networks_chomsky_hierarchy
// tasks/regular/cycle_navigation.py (docs/benchmarks/chomsky_hierarchy.md §2.2). Definition:
// docs/tasks.md.
//
// Letters: L input length; input ids 0..2, output classes 0..4 (chomsky_task.hpp).
#include <vector>

#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class CycleNavigation final : public ChomskyTask {
 public:
  CycleNavigation() : ChomskyTask("cycle_navigation", 3, 5) {}
  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    int64_t position = 0;
    for (int64_t t = 0; t < L; ++t) {
      input.push_back(static_cast<int32_t>(rng.below(3)));
      position += input.back() - 1;
    }
    output.push_back(static_cast<int32_t>(((position % 5) + 5) % 5));
  }
};

}  // namespace

TaskInfo cycle_navigation_info() {
  TaskInfo info;
  info.name = "cycle_navigation";
  info.summary =
      "moves -1, 0, +1 on a cycle of 5 from 0; output the final position (Chomsky hierarchy, "
      "regular)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<CycleNavigation>();
  };
  return info;
}

}  // namespace normlab
