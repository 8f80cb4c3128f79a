// The best answer to a Chomsky-hierarchy task that does not read the input, on a given set of
// sequences of one length: for each output position the class most frequent there among the
// sequences' scored positions (ChomskyTask::score's: all O, or up to and including the end
// class). No answer that ignores the input scores more on those sequences, so its accuracy on a
// study's own evaluation sequences is design rule D1's floor there (docs/tasks.md, "Chance").
//
// Letters: L task length, T = N + O sequence length, O output positions, K classes.
#pragma once

#include <cstdint>
#include <vector>

#include "normlab/tasks/task.hpp"
#include "tasks/chomsky/chomsky_task.hpp"

namespace normlab {

class BlindAnswer {
 public:
  BlindAnswer(const ChomskyTask& task, int64_t L);

  // Counts every sequence of `batch`, a batch of the task at length L (T per sequence).
  void add(const Batch& batch);
  // O: the most frequent class at each output position (the lowest on a tie).
  std::vector<int32_t> classes() const;
  // classes()' accuracy on the sequences added, pooled over their scored positions as score()
  // pools them: Σ_o max_k count(o, k) / Σ scored positions. NaN before any sequence.
  double accuracy() const;

 private:
  const ChomskyTask& task_;
  int64_t T_, O_;
  std::vector<int64_t> count_;  // O × K: how often class k is the target at position o, scored
  int64_t scored_ = 0;
};

}  // namespace normlab
