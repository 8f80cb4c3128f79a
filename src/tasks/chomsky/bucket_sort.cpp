// bucket_sort: s uniform on {0..4}^L; the output is s sorted ascending. Reference:
// google-deepmind/neural_networks_chomsky_hierarchy tasks/cs/bucket_sort.py
// (docs/benchmarks/chomsky_hierarchy.md §2.2). Definition: docs/tasks.md.
//
// Letters: L input length; input ids 0..4, output classes 0..4 (chomsky_task.hpp).
#include <algorithm>
#include <vector>

#include "tasks/chomsky/chomsky_task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {
namespace {

class BucketSort final : public ChomskyTask {
 public:
  BucketSort() : ChomskyTask("bucket_sort", 5, 5) {}
  int64_t output_length(int64_t L) const override { return L; }
  void sample(int64_t L, Rng& rng, std::vector<int32_t>& input,
              std::vector<int32_t>& output) const override {
    for (int64_t t = 0; t < L; ++t) input.push_back(static_cast<int32_t>(rng.below(5)));
    output = input;
    std::sort(output.begin(), output.end());
  }
};

}  // namespace

TaskInfo bucket_sort_info() {
  TaskInfo info;
  info.name = "bucket_sort";
  info.summary = "a string over 5 symbols; output it sorted (Chomsky hierarchy, context-sensitive)";
  info.make = [](const TaskParams&) -> std::unique_ptr<Task> {
    return std::make_unique<BucketSort>();
  };
  return info;
}

}  // namespace normlab
