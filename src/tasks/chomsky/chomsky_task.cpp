// The Chomsky-hierarchy tasks' common layout and metric (chomsky_task.hpp).
#include "tasks/chomsky/chomsky_task.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

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

double ChomskyTask::chance(int64_t L) const {
  static std::mutex mutex;
  static std::map<std::pair<std::string, int64_t>, double> computed;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(name_, L);
  if (const auto found = computed.find(key); found != computed.end()) return found->second;
  const int64_t N = input_length(L), O = output_length(N);
  std::vector<int32_t> input, output;
  // Draws one sequence into `output`; returns its scored positions (score()'s: up to and
  // including the end class, where the task has one).
  const auto draw = [&](Rng& rng) {
    input.clear();
    output.clear();
    sample(N, rng, input, output);
    for (int64_t o = 0; o < O; ++o) {
      if (output[o] == termination_) return o + 1;
    }
    return O;
  };
  // count[o * K + k]: how often class k is the answer at output position o, where scored.
  std::vector<int64_t> count(O * output_classes_, 0);
  Rng choose(0xC4A2CE);
  for (int64_t s = 0; s < kChanceSequences; ++s) {
    const int64_t m = draw(choose);
    for (int64_t o = 0; o < m; ++o) ++count[o * output_classes_ + output[o]];
  }
  std::vector<int32_t> answer(O);  // the most frequent class at each position
  for (int64_t o = 0; o < O; ++o) {
    const auto first = count.begin() + o * output_classes_;
    answer[o] = static_cast<int32_t>(std::max_element(first, first + output_classes_) - first);
  }
  Rng score(0xC4A2CF);
  int64_t right = 0, scored = 0;
  for (int64_t s = 0; s < kChanceSequences || scored < kChancePositions; ++s) {
    const int64_t m = draw(score);
    for (int64_t o = 0; o < m; ++o) right += output[o] == answer[o];
    scored += m;
  }
  const double accuracy = static_cast<double>(right) / static_cast<double>(scored);
  computed.emplace(key, accuracy);
  return accuracy;
}

}  // namespace normlab
