// duplicate_string: s uniform on {0,1}^L; the output is s twice. Reference:
// google-deepmind/neural_networks_chomsky_hierarchy tasks/cs/duplicate_string.py
// (docs/benchmarks/chomsky_hierarchy.md §2.2). Definition: docs/tasks.md.
//
// Letters: L input length; input ids 0..1, output classes 0..1 (chomsky_task.hpp).
#include <vector>

#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class DuplicateString final : public ChomskyTask {
 public:
  DuplicateString() : ChomskyTask("duplicate_string", 2, 2) {}
  int64_t output_length(int64_t L) const override { return 2 * L; }
  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    for (int64_t t = 0; t < L; ++t) input.push_back(static_cast<int32_t>(rng.below(2)));
    output = input;
    output.insert(output.end(), input.begin(), input.end());
  }
};

}  // namespace

TaskInfo duplicate_string_info() {
  TaskInfo info;
  info.name = "duplicate_string";
  info.summary = "a binary string s; output ss (Chomsky hierarchy, context-sensitive)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<DuplicateString>();
  };
  return info;
}

}  // namespace normlab
