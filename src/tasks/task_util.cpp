#include "tasks/task_util.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "normlab/base/errors.hpp"

namespace normlab::task_util {

int64_t int_param(const TaskParams& params, const std::string& task, const std::string& name,
                  int64_t lo, int64_t hi) {
  const int64_t v = param_int(params, name);
  if (v < lo || v > hi) {
    throw UsageError(
        fmt::format("task {}: parameter {} = {} is outside its range; allowed: {} to {}", task,
                    name, v, lo, hi));
  }
  return v;
}

namespace {

struct SampleBuffers {
  std::vector<uint32_t> perm;  // the identity between samples
  std::vector<uint32_t> swaps;
  bool live = false;
};

SampleBuffers& sample_buffers() {
  thread_local SampleBuffers buffers;
  return buffers;
}

}  // namespace

DistinctSample::DistinctSample(int64_t n, int64_t k, Rng& rng) : k_(k) {
  if (k < 0 || k > n || n > int64_t{std::numeric_limits<uint32_t>::max()}) {
    throw std::logic_error("DistinctSample: need 0 <= k <= n < 2^32");
  }
  SampleBuffers& s = sample_buffers();
  if (s.live) throw std::logic_error("DistinctSample: one live sample per thread");
  s.live = true;
  // Grow the identity permutation; the existing prefix is already the identity.
  for (int64_t i = static_cast<int64_t>(s.perm.size()); i < n; ++i) {
    s.perm.push_back(static_cast<uint32_t>(i));
  }
  if (static_cast<int64_t>(s.swaps.size()) < k) s.swaps.resize(k);
  perm_ = s.perm.data();
  swap_ = s.swaps.data();
  for (int64_t i = 0; i < k; ++i) {
    const int64_t j = i + static_cast<int64_t>(rng.below(static_cast<uint64_t>(n - i)));
    std::swap(perm_[i], perm_[j]);
    swap_[i] = static_cast<uint32_t>(j);
  }
}

DistinctSample::~DistinctSample() {
  for (int64_t i = k_ - 1; i >= 0; --i) std::swap(perm_[i], perm_[swap_[i]]);
  sample_buffers().live = false;
}

int argmax(const float* x, int n) {
  int best = 0;
  for (int j = 1; j < n; ++j) {
    if (x[j] > x[best]) best = j;
  }
  return best;
}

void softmax(const float* logits, int n, std::vector<double>& out) {
  out.resize(n);
  double mx = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < n; ++j) mx = std::max(mx, static_cast<double>(logits[j]));
  double sum = 0;
  for (int j = 0; j < n; ++j) {
    out[j] = std::exp(static_cast<double>(logits[j]) - mx);
    sum += out[j];
  }
  for (int j = 0; j < n; ++j) out[j] /= sum;
}

double tvd_uniform(const float* logits, int n, const int32_t* support, int64_t k) {
  thread_local std::vector<double> p;
  softmax(logits, n, p);
  const double q = 1.0 / static_cast<double>(k);
  double d = 0;
  int64_t i = 0;  // the next member of the support
  for (int j = 0; j < n; ++j) {
    const bool member = i < k && support[i] == j;
    if (member) ++i;
    d += std::abs(p[j] - (member ? q : 0.0));
  }
  return 0.5 * d;
}

}  // namespace normlab::task_util
