// compute_sqrt: ⌊√n⌋ in big-endian binary. Reference: google-deepmind/
// neural_networks_chomsky_hierarchy tasks/cs/compute_sqrt.py (docs/benchmarks/
// chomsky_hierarchy.md §2.2): n uniform on 1..2^L − 1 written as L bits, most significant first
// (the code; its paper says little-endian); the answer ⌊√n⌋ as ⌈L/2⌉ bits, most significant
// first. Definition: docs/tasks.md.
//
// Letters: L input length; input ids and output classes 0, 1.
#include <algorithm>

#include "tasks/chomsky/bits.hpp"
#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class ComputeSqrt final : public ChomskyTask {
 public:
  ComputeSqrt() : ChomskyTask("compute_sqrt", 2, 2) {}
  int64_t output_length(int64_t L) const override { return (L + 1) / 2; }

  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    const chomsky::Bits n = chomsky::random_nonzero(L, rng);  // little-endian
    input.assign(n.rbegin(), n.rend());
    chomsky::Bits root = chomsky::isqrt(n);
    root.resize((L + 1) / 2, 0);  // zero-padded to ⌈L/2⌉ bits
    output.assign(root.rbegin(), root.rend());
  }
};

}  // namespace

TaskInfo compute_sqrt_info() {
  TaskInfo info;
  info.name = "compute_sqrt";
  info.summary =
      "n in big-endian binary; output floor(sqrt(n)) in big-endian binary (Chomsky hierarchy, "
      "context-sensitive)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<ComputeSqrt>();
  };
  return info;
}

}  // namespace normlab
