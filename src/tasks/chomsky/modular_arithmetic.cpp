// modular_arithmetic: d op d op ... d over digits 0..4 and + − *, the class its value mod 5.
// Reference: google-deepmind/neural_networks_chomsky_hierarchy tasks/regular/
// modular_arithmetic.py (docs/benchmarks/chomsky_hierarchy.md §2.2): an even length L is
// shortened to L − 1 (the code; its paper says L + 1), digits uniform, operators uniform over
// + * − (the code's intent: its operator generator is used up after one trace). Definition:
// docs/tasks.md.
//
// Letters: N = L or L − 1 (odd) input tokens; input ids 0..8 (digits, + − *, and the reference's
// unused blank 8); output classes 0..4.
#include "tasks/chomsky/modular_arithmetic.hpp"

#include <stdexcept>

#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace chomsky {

int32_t modular_value(const std::vector<int32_t>& e) {
  if (e.empty() || e.size() % 2 == 0) throw std::logic_error("modular_value: d op d ... d");
  // Terms separated by + and −, each a product; a − negates the term after it.
  int64_t sum = 0, term = e[0];
  for (size_t i = 1; i + 1 < e.size(); i += 2) {
    const int32_t op = e[i], d = e[i + 1];
    if (op == kTimes) {
      term = term * d % 5;
    } else {
      sum += term;
      term = op == kMinus ? -d : d;
    }
  }
  return static_cast<int32_t>(((sum + term) % 5 + 5) % 5);
}

}  // namespace chomsky

namespace {

class ModularArithmetic final : public ChomskyTask {
 public:
  ModularArithmetic() : ChomskyTask("modular_arithmetic", 9, 5) {}
  int64_t input_length(int64_t L) const override { return L % 2 == 1 ? L : L - 1; }

  void sample(int64_t N, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    static constexpr int32_t kOperators[3] = {chomsky::kPlus, chomsky::kTimes, chomsky::kMinus};
    for (int64_t t = 0; t < N; ++t) {
      input.push_back(t % 2 == 0 ? static_cast<int32_t>(rng.below(5)) : kOperators[rng.below(3)]);
    }
    output.push_back(chomsky::modular_value(input));
  }
};

}  // namespace

TaskInfo modular_arithmetic_info() {
  TaskInfo info;
  info.name = "modular_arithmetic";
  info.summary =
      "an expression d op d ... d over digits 0..4 and + - *; output its value mod 5 (Chomsky "
      "hierarchy, regular)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<ModularArithmetic>();
  };
  return info;
}

}  // namespace normlab
