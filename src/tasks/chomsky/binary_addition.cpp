// binary_addition: n + m in little-endian binary. Reference: google-deepmind/
// neural_networks_chomsky_hierarchy tasks/cs/binary_addition.py (docs/benchmarks/
// chomsky_hierarchy.md §2.2): for L ≤ 2 one number n uniform on 0..2^L − 2 and its bits; else
// n and m of ln and lm = L − 1 − ln bits (ln uniform on 1..L−2), each uniform on 1..2^l − 1,
// written n + m. The answer: the sum's bits, the termination class 2, then 0s to L + 1.
// Definition: docs/tasks.md.
//
// Letters: L input length; input ids 0, 1 (bits), 2 (+); output classes 0, 1 (bits), 2 (end).
#include "tasks/chomsky/binary_operands.hpp"
#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class BinaryAddition final : public ChomskyTask {
 public:
  BinaryAddition() : ChomskyTask("binary_addition", 3, 3, chomsky::kEnd) {}
  int64_t output_length(int64_t L) const override { return L + 1; }

  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    const chomsky::Operands x = chomsky::draw_operands(L, rng);
    input = x.input;
    output = x.short_input ? chomsky::trimmed(x.n) : chomsky::add(x.n, x.m);
    chomsky::terminate(output, L + 1);
  }
};

}  // namespace

TaskInfo binary_addition_info() {
  TaskInfo info;
  info.name = "binary_addition";
  info.summary =
      "n+m in little-endian binary; output the sum's bits and an end token (Chomsky hierarchy, "
      "context-sensitive)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<BinaryAddition>();
  };
  return info;
}

}  // namespace normlab
