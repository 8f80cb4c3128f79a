// Where a probe's sequences come from, and which positions it measures.
//
//   random: i.i.d. uniform tokens over the model's vocabulary, one field; the length axis is
//           the sequence length T = N. With targets (the depth probe), position t's target is
//           the token at t + 1 and the last position is unscored (random_next_token_batch).
//   task:   the task's own sequences at task length n, T = task.sequence_length(n), with
//           the task's targets.
// Measured (query) rows: per sequence, the last k positions (random), or the last k scored
// positions (task: the query position for every task but dyck, which scores every position;
// the last k positions when a sequence has no scored position).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "normlab/base/batch.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab {

class ProbeInput {
 public:
  static ProbeInput random(int vocab);
  // Keeps a reference to `task`, which must outlive the input.
  static ProbeInput from_task(const Task& task);

  bool is_task() const { return task_ != nullptr; }
  // "random tokens (V=16)" or the task's label.
  std::string label() const;
  // {"kind": "random", "vocab": V} or {"kind": "task", "label": ...}.
  nlohmann::json to_json() const;
  int fields() const;
  // UsageError for a length the input cannot produce (random: below 1).
  void check_length(int64_t n) const;
  int64_t sequence_length(int64_t n) const;
  // B sequences at length n. Random tokens carry next-token targets only if `targets`.
  Batch make_batch(int64_t n, int64_t B, Rng& rng, bool targets = false) const;
  // Ascending row indices b·T + t of the measured positions, at most k per sequence.
  std::vector<int64_t> query_rows(const Batch& batch, int64_t k) const;

 private:
  int vocab_ = 0;
  const Task* task_ = nullptr;
};

}  // namespace normlab
