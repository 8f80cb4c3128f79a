// Helpers shared by the task files: parameter checks, sampling without replacement, per-length
// table caches, and the pieces of scoring (argmax, softmax, total variation distance).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "normlab/base/batch.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab::task_util {

// Integer parameter `name` of task `task`, checked to lie in [lo, hi]; otherwise UsageError
// "task TASK: parameter NAME = X is outside its range; allowed: LO to HI".
int64_t int_param(const TaskParams& params, const std::string& task, const std::string& name,
                  int64_t lo, int64_t hi);

// A uniformly random ordered sample of k distinct elements of {0..n−1} (partial Fisher–Yates),
// in O(k) time: the permutation lives in a thread-local buffer that is the identity between
// samples (the swaps are undone by the destructor). Elements [0, k) are the sample in order,
// [k, n) the elements not drawn (in no useful order). One live sample per thread at a time.
class DistinctSample {
 public:
  DistinctSample(int64_t n, int64_t k, Rng& rng);
  ~DistinctSample();
  DistinctSample(const DistinctSample&) = delete;
  DistinctSample& operator=(const DistinctSample&) = delete;

  int64_t operator[](int64_t i) const { return perm_[i]; }

 private:
  uint32_t* perm_;  // (n) the thread-local permutation
  uint32_t* swap_;  // (k) the partner of each swap, to undo them
  int64_t k_;
};

// Tables computed once per task length and kept for the task's lifetime; safe to use from
// several threads (a lookup takes a mutex; a table is built under it, once).
template <class Table>
class LengthCache {
 public:
  template <class Build>
  const Table& get(int64_t n, Build&& build) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = tables_.find(n);
    if (it == tables_.end()) it = tables_.emplace(n, std::make_unique<Table>(build(n))).first;
    return *it->second;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::map<int64_t, std::unique_ptr<const Table>> tables_;
};

// Index of the largest of x[0..n) (the lowest index on ties).
int argmax(const float* x, int n);

// softmax(logits) in double, into out (resized to n).
void softmax(const float* logits, int n, std::vector<double>& out);

// Total variation distance 0.5 · Σ_j |softmax(logits)_j − q_j| over j < n, q the uniform
// distribution over the k tokens of `support` (ascending, distinct): q_j = 1/k in double there,
// 0 elsewhere. No (n) row of q is built; the sum runs over j in order.
double tvd_uniform(const float* logits, int n, const int32_t* support, int64_t k);

}  // namespace normlab::task_util
