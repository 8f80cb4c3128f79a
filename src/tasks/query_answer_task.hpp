// A task with one answer per sequence, at its last position (the query), scored by whether the
// logits' argmax is that answer: argmax retrieval, dictionary lookup, maximum retrieval.
#pragma once

#include <string>
#include <vector>

#include "normlab/tasks/task.hpp"
#include "tasks/task_util.hpp"

namespace normlab {

class QueryAnswerTask : public Task {
 public:
  // logits: the (V) logits of sequence b's last position.
  void score(const Batch& batch, int64_t b, const float* logits,
             MetricAccumulator& metrics) const override {
    const int32_t answer = batch.target(b * batch.len + batch.len - 1).most_likely();
    metrics.add_proportion("accuracy", task_util::argmax(logits, batch.vocab) == answer);
  }

  std::vector<std::string> metric_names() const override { return {"accuracy"}; }
};

}  // namespace normlab
