// reverse_string: s uniform on {0,1}^L; the output is s reversed. Reference:
// google-deepmind/neural_networks_chomsky_hierarchy tasks/dcf/reverse_string.py
// (docs/benchmarks/chomsky_hierarchy.md §2.2). Definition: docs/tasks.md.
//
// Letters: L input length; input ids 0..1, output classes 0..1 (chomsky_task.hpp).
#include <vector>

#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class ReverseString final : public ChomskyTask {
 public:
  ReverseString() : ChomskyTask("reverse_string", 2, 2) {}
  int64_t output_length(int64_t L) const override { return L; }
  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    for (int64_t t = 0; t < L; ++t) input.push_back(static_cast<int32_t>(rng.below(2)));
    output.assign(input.rbegin(), input.rend());
  }
};

}  // namespace

TaskInfo reverse_string_info() {
  TaskInfo info;
  info.name = "reverse_string";
  info.summary =
      "a binary string; output it reversed (Chomsky hierarchy, deterministic context-free)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<ReverseString>();
  };
  return info;
}

}  // namespace normlab
