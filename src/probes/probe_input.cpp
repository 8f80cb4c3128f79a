#include "normlab/probes/probe_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"

namespace normlab {

ProbeInput ProbeInput::random(int vocab) {
  ProbeInput in;
  in.vocab_ = vocab;
  return in;
}

ProbeInput ProbeInput::from_task(const Task& task) {
  ProbeInput in;
  in.vocab_ = task.vocab();
  in.task_ = &task;
  return in;
}

std::string ProbeInput::label() const {
  return task_ != nullptr ? task_->label() : fmt::format("random tokens (V={})", vocab_);
}

nlohmann::json ProbeInput::to_json() const {
  if (task_ != nullptr) return {{"kind", "task"}, {"label", task_->label()}};
  return {{"kind", "random"}, {"vocab", vocab_}};
}

int ProbeInput::fields() const {
  return task_ != nullptr ? task_->fields() : 1;
}

void ProbeInput::check_length(int64_t n) const {
  if (task_ != nullptr) {
    task_->check_length(n);
  } else if (n < 1) {
    throw UsageError(fmt::format("length {} is not a sequence length; allowed: at least 1", n));
  }
}

int64_t ProbeInput::sequence_length(int64_t n) const {
  return task_ != nullptr ? task_->sequence_length(n) : n;
}

Batch ProbeInput::make_batch(int64_t n, int64_t B, Rng& rng, bool targets) const {
  if (task_ != nullptr) return task_->make_batch(n, B, rng);
  if (targets) return random_next_token_batch(vocab_, B, n, rng);
  Batch out;
  out.resize(B, n, vocab_);
  for (auto& t : out.tokens) t = static_cast<int32_t>(rng.below(vocab_));
  return out;
}

std::vector<int64_t> ProbeInput::query_rows(const Batch& batch, int64_t k) const {
  std::vector<int64_t> rows;
  const int64_t T = batch.len;
  std::vector<int64_t> seq;
  for (int64_t b = 0; b < batch.batch; ++b) {
    seq.clear();
    if (task_ != nullptr) {
      for (int64_t t = T - 1; t >= 0 && static_cast<int64_t>(seq.size()) < k; --t) {
        if (batch.weight[b * T + t] > 0) seq.push_back(b * T + t);
      }
    }
    if (seq.empty()) {
      for (int64_t t = T - 1; t >= 0 && static_cast<int64_t>(seq.size()) < k; --t) {
        seq.push_back(b * T + t);
      }
    }
    rows.insert(rows.end(), seq.rbegin(), seq.rend());
  }
  return rows;
}

}  // namespace normlab
