// solve_equation: a bracketed expression over + and − with one digit replaced by x, "=" and
// its value; the class is the hidden digit. Reference: google-deepmind/
// neural_networks_chomsky_hierarchy tasks/dcf/solve_equation.py (docs/benchmarks/
// chomsky_hierarchy.md §2.2, task 8): the expression of length L − 2 without *, the digit at
// or after a uniform start position (cyclically) becomes x; for L < 3 the reference's dummy
// (L zeros, class 0). Definition: docs/tasks.md.
//
// Letters: L input length; input ids 0..4 digits, 5 +, 6 −, 7 (, 8 ), 9 x, 10 =; output
// classes 0..4.
#include <string>

#include "tasks/chomsky/bracket_expression.hpp"
#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class SolveEquation final : public ChomskyTask {
 public:
  SolveEquation() : ChomskyTask("solve_equation", 11, 5) {}

  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    if (L < 3) {  // the reference's dummy sample
      input.assign(L, 0);
      output.push_back(0);
      return;
    }
    chomsky::Expression e = chomsky::bracket_expression(L - 2, false, rng);
    const int64_t n = L - 2;
    int64_t at = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
    while (!(e.text[at] >= '0' && e.text[at] <= '4')) at = (at + 1) % n;
    output.push_back(e.text[at] - '0');
    e.text[at] = 'x';
    const std::string equation = e.text + "=" + std::string(1, static_cast<char>('0' + e.value));
    const std::string alphabet = "01234+-()x=";
    for (const char c : equation) input.push_back(static_cast<int32_t>(alphabet.find(c)));
  }
};

}  // namespace

TaskInfo solve_equation_info() {
  TaskInfo info;
  info.name = "solve_equation";
  info.summary =
      "a bracketed equation over + and - with one unknown digit x; output x (Chomsky "
      "hierarchy, deterministic context-free)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<SolveEquation>();
  };
  return info;
}

}  // namespace normlab
