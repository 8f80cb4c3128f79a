// The best input-blind answer on given sequences (blind_answer.hpp).
#include "tasks/chomsky/blind_answer.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace normlab {

BlindAnswer::BlindAnswer(const ChomskyTask& task, int64_t L)
    : task_(task),
      T_(task.sequence_length(L)),
      O_(task.output_length(task.input_length(L))),
      count_(O_ * task.output_classes(), 0) {}

void BlindAnswer::add(const Batch& batch) {
  if (batch.len != T_) {
    throw std::logic_error(task_.label() + ": a blind answer counts sequences of one length");
  }
  const int K = task_.output_classes();
  for (int64_t b = 0; b < batch.batch; ++b) {
    for (int64_t o = 0; o < O_; ++o) {
      const int32_t k = batch.target(b * T_ + T_ - O_ + o).most_likely() - task_.class_token(0);
      ++count_[o * K + k];
      ++scored_;
      if (k == task_.termination_class()) break;
    }
  }
}

std::vector<int32_t> BlindAnswer::classes() const {
  const int K = task_.output_classes();
  std::vector<int32_t> answer(O_);
  for (int64_t o = 0; o < O_; ++o) {
    const auto first = count_.begin() + o * K;
    answer[o] = static_cast<int32_t>(std::max_element(first, first + K) - first);
  }
  return answer;
}

double BlindAnswer::accuracy() const {
  if (scored_ == 0) return std::numeric_limits<double>::quiet_NaN();
  const int K = task_.output_classes();
  int64_t right = 0;
  for (int64_t o = 0; o < O_; ++o) {
    const auto first = count_.begin() + o * K;
    right += *std::max_element(first, first + K);
  }
  return static_cast<double>(right) / static_cast<double>(scored_);
}

}  // namespace normlab
