// binary_multiplication: n · m in little-endian binary. Reference: google-deepmind/
// neural_networks_chomsky_hierarchy tasks/cs/binary_multiplication.py (docs/benchmarks/
// chomsky_hierarchy.md §2.2): the operands as binary_addition's; for L ≤ 2 the answer is fixed
// (none for L = 1, the bit 0 for L = 2, as the code); else the product's bits. Then the
// termination class 2 and 0s to L. Definition: docs/tasks.md.
//
// Letters: L input length; input ids 0, 1 (bits), 2 (the operator); output classes 0, 1 (bits),
// 2 (end).
#include "tasks/chomsky/binary_operands.hpp"
#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class BinaryMultiplication final : public ChomskyTask {
 public:
  BinaryMultiplication() : ChomskyTask("binary_multiplication", 3, 3, chomsky::kEnd) {}
  int64_t output_length(int64_t L) const override { return L; }

  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    const chomsky::Operands x = chomsky::draw_operands(L, rng);
    input = x.input;
    if (x.short_input) {
      output = L == 1 ? std::vector<int32_t>{} : std::vector<int32_t>{0};
    } else {
      output = chomsky::multiply(x.n, x.m);
    }
    chomsky::terminate(output, L);
  }
};

}  // namespace

TaskInfo binary_multiplication_info() {
  TaskInfo info;
  info.name = "binary_multiplication";
  info.summary =
      "n*m in little-endian binary; output the product's bits and an end token (Chomsky "
      "hierarchy, context-sensitive)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<BinaryMultiplication>();
  };
  return info;
}

}  // namespace normlab
