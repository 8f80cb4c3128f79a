// The Chomsky-hierarchy tasks' common layout and metric (chomsky_task.hpp).
#include "tasks/chomsky/chomsky_task.hpp"

#include <algorithm>
#include <stdexcept>

#include "tasks/task_util.hpp"

namespace normlab {

void ChomskyTask::generate(int64_t L, Rng& rng, Batch& batch, int64_t b) const {
  thread_local std::vector<int32_t> input, output;
  input.clear();
  output.clear();
  const int64_t N = input_length(L), O = output_length(N), row0 = b * (N + O);
  sample(N, rng, input, output);
  if (static_cast<int64_t>(input.size()) != N || static_cast<int64_t>(output.size()) != O) {
    throw std::logic_error(label() + ": a sample of the wrong length");
  }
  for (int64_t t = 0; t < N; ++t) {
    batch.token(row0 + t) = input[t];
    batch.weight[row0 + t] = 0.0f;
  }
  for (int64_t o = 0; o < O; ++o) {
    batch.token(row0 + N + o) = empty_token();
    batch.set_one_hot(row0 + N + o, class_token(output[o]));
  }
}

void ChomskyTask::score(const Batch& batch, int64_t b, const float* logits,
                        MetricAccumulator& metrics) const {
  // One proportion per scored position, so the length's accuracy pools the positions of all
  // its sequences: sum(mask · correct) / sum(mask), the reference's accuracy_fn.
  const int64_t T = batch.len;
  int64_t row = 0;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t n = b * T + t;
    if (batch.weight[n] <= 0.0f) continue;
    const float* classes = logits + row * batch.vocab + class_token(0);
    const int32_t target = batch.target(n).most_likely();
    metrics.add_proportion("accuracy",
                           class_token(task_util::argmax(classes, output_classes_)) == target);
    ++row;
    if (termination_ >= 0 && target == class_token(termination_)) break;
  }
}

}  // namespace normlab
