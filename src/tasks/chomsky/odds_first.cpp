// odds_first: s uniform on {0,1}^L; the output is s[1::2] then s[0::2], as the reference's code
// (its paper and docstring put s[0::2] first). Reference:
// google-deepmind/neural_networks_chomsky_hierarchy tasks/cs/odds_first.py
// (docs/benchmarks/chomsky_hierarchy.md §2.2). Definition: docs/tasks.md.
//
// Letters: L input length; input ids 0..1, output classes 0..1 (chomsky_task.hpp).
#include <vector>

#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class OddsFirst final : public ChomskyTask {
 public:
  OddsFirst() : ChomskyTask("odds_first", 2, 2) {}
  int64_t output_length(int64_t L) const override { return L; }
  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    for (int64_t t = 0; t < L; ++t) input.push_back(static_cast<int32_t>(rng.below(2)));
    for (int64_t t = 1; t < L; t += 2) output.push_back(input[t]);
    for (int64_t t = 0; t < L; t += 2) output.push_back(input[t]);
  }
};

}  // namespace

TaskInfo odds_first_info() {
  TaskInfo info;
  info.name = "odds_first";
  info.summary =
      "a binary string; output its odd (0-based) positions, then its even ones (Chomsky hierarchy, "
      "context-sensitive)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<OddsFirst>();
  };
  return info;
}

}  // namespace normlab
