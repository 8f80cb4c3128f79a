// even_pairs: s uniform on {0,1}^L; the class is the count of unequal adjacent pairs mod 2 (0 =
// even). Reference: google-deepmind/neural_networks_chomsky_hierarchy tasks/regular/even_pairs.py
// (docs/benchmarks/chomsky_hierarchy.md §2.2). Definition: docs/tasks.md.
//
// Letters: L input length; input ids 0..1, output classes 0..1 (chomsky_task.hpp).
#include <vector>

#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class EvenPairs final : public ChomskyTask {
 public:
  EvenPairs() : ChomskyTask("even_pairs", 2, 2) {}
  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    for (int64_t t = 0; t < L; ++t) input.push_back(static_cast<int32_t>(rng.below(2)));
    int32_t unequal = 0;
    for (int64_t t = 1; t < L; ++t) unequal += input[t] != input[t - 1];
    output.push_back(unequal % 2);
  }
};

}  // namespace

TaskInfo even_pairs_info() {
  TaskInfo info;
  info.name = "even_pairs";
  info.summary =
      "a binary string; output whether its number of unequal adjacent pairs (01, 10) is even "
      "(Chomsky hierarchy, regular)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<EvenPairs>();
  };
  return info;
}

}  // namespace normlab
