// stack_manipulation: a stack, then actions on it; output the final stack top first, an end
// class and 0s. Reference: google-deepmind/neural_networks_chomsky_hierarchy tasks/dcf/
// stack_manipulation.py (docs/benchmarks/chomsky_hierarchy.md §2.2, task 5): for L ≥ 2 a stack
// of k bits (k uniform on 1..L−1, given bottom to top), then L − k actions uniform over POP,
// PUSH 0, PUSH 1 (POP on an empty stack does nothing); for L = 1 one bit, its own answer.
// Accuracy up to the end class (the reference's mask). Definition: docs/tasks.md.
//
// Letters: L input length; input ids 0, 1 (stack bits), 2 POP, 3 PUSH 0, 4 PUSH 1; output
// classes 0, 1 (bits), 2 (end).
#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

constexpr int32_t kPop = 2, kPush0 = 3, kEnd = 2;

class StackManipulation final : public ChomskyTask {
 public:
  StackManipulation() : ChomskyTask("stack_manipulation", 5, 3, kEnd) {}
  int64_t output_length(int64_t L) const override { return L + 1; }

  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    std::vector<int32_t> stack;  // bottom to top
    if (L == 1) {
      stack.push_back(static_cast<int32_t>(rng.below(2)));
      input = stack;
    } else {
      const int64_t k = 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(L - 1)));
      for (int64_t i = 0; i < k; ++i) stack.push_back(static_cast<int32_t>(rng.below(2)));
      input = stack;
      for (int64_t i = k; i < L; ++i) {
        const int32_t action = 2 + static_cast<int32_t>(rng.below(3));
        input.push_back(action);
        if (action == kPop) {
          if (!stack.empty()) stack.pop_back();
        } else {
          stack.push_back(action - kPush0);
        }
      }
    }
    output.assign(stack.rbegin(), stack.rend());  // top first
    output.push_back(kEnd);
    output.resize(L + 1, 0);
  }
};

}  // namespace

TaskInfo stack_manipulation_info() {
  TaskInfo info;
  info.name = "stack_manipulation";
  info.summary =
      "a stack of bits, then POP / PUSH actions; output the final stack top first and an end "
      "token (Chomsky hierarchy, deterministic context-free)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<StackManipulation>();
  };
  return info;
}

}  // namespace normlab
