// modular_arithmetic_brackets: a bracketed expression over digits 0..4 and + − *, the class its
// value mod 5. Reference: google-deepmind/neural_networks_chomsky_hierarchy tasks/dcf/
// modular_arithmetic_brackets.py, built with mult=True as its experiments/constants.py does
// (docs/benchmarks/chomsky_hierarchy.md §2.2, task 7). Definition: docs/tasks.md.
//
// Letters: L input length; input ids 0..4 digits, 5 +, 6 −, 7 *, 8 (, 9 ), 10 x (unused here);
// output classes 0..4.
#include <string>

#include "tasks/chomsky/bracket_expression.hpp"
#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class ModularArithmeticBrackets final : public ChomskyTask {
 public:
  ModularArithmeticBrackets() : ChomskyTask("modular_arithmetic_brackets", 11, 5) {}

  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    const chomsky::Expression e = chomsky::bracket_expression(L, true, rng);
    const std::string alphabet = "01234+-*()";
    for (const char c : e.text) input.push_back(static_cast<int32_t>(alphabet.find(c)));
    output.push_back(e.value);
  }
};

}  // namespace

TaskInfo modular_arithmetic_brackets_info() {
  TaskInfo info;
  info.name = "modular_arithmetic_brackets";
  info.summary =
      "a bracketed expression over digits 0..4 and + - *; output its value mod 5 (Chomsky "
      "hierarchy, deterministic context-free)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<ModularArithmeticBrackets>();
  };
  return info;
}

}  // namespace normlab
