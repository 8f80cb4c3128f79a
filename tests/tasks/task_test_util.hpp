// Helpers for the task tests: building a task by name with some parameters overridden,
// checking the structure every batch must have, scoring hand-made logits, and a chi-square
// bound for uniformity checks.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "normlab/base/batch.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/tasks/metrics.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab::testing {

// The task `name` with its default parameters, except those in `overrides`.
inline std::unique_ptr<Task> make(const std::string& name, const TaskParams& overrides = {}) {
  const TaskInfo& info = find_task(name);
  TaskParams params;
  for (const TaskParamDef& def : info.params) params[def.name] = def.fallback;
  for (const auto& [key, value] : overrides) params[key] = value;
  return info.make(params);
}

// The message of the UsageError `fn` throws ("" and a test failure if it throws none).
inline std::string usage_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UsageError";
  return "";
}

// Which positions a task scores: the last one (a query), all of them, or those its weights
// mark (each weight 0 or 1; mqar's queries).
enum class Scored { last, all, marked };

// Structure every generated batch must have: shapes; tokens in [0, V) or kNoToken (and field 0
// never empty); weights 1 at the scored positions and 0 elsewhere; a distribution (≥ 0, sum 1)
// at every scored row and no target at an unscored row; the sparse target layout (offsets from
// 0 to E, every target's tokens ascending, distinct and in [0, V), probabilities positive).
inline void expect_well_formed(const Task& task, const Batch& batch, int64_t n, Scored scored) {
  ASSERT_EQ(batch.len, task.sequence_length(n));
  ASSERT_EQ(batch.vocab, task.vocab());
  ASSERT_EQ(batch.fields, task.fields());
  const int V = batch.vocab;
  const int64_t rows = batch.batch * batch.len;
  ASSERT_EQ(static_cast<int64_t>(batch.tokens.size()), rows * batch.fields);
  ASSERT_EQ(static_cast<int64_t>(batch.target_slot.size()), rows);
  ASSERT_EQ(static_cast<int64_t>(batch.weight.size()), rows);
  for (int64_t r = 0; r < rows; ++r) {
    ASSERT_GE(batch.token(r, 0), 0) << "row " << r;
    for (int f = 0; f < batch.fields; ++f) {
      const int32_t tok = batch.token(r, f);
      ASSERT_TRUE(tok == kNoToken || (tok >= 0 && tok < V)) << "row " << r << " field " << f;
    }
    const bool is_scored = scored == Scored::marked ? batch.weight[r] == 1.0f
                           : scored == Scored::all  ? true
                                                    : r % batch.len == batch.len - 1;
    ASSERT_EQ(batch.weight[r], is_scored ? 1.0f : 0.0f) << "row " << r;
    double sum = 0;
    for (int j = 0; j < V; ++j) {
      const float p = batch.target_value(r, j);
      ASSERT_GE(p, 0.0f) << "row " << r;
      sum += p;
    }
    ASSERT_NEAR(sum, is_scored ? 1.0 : 0.0, 1e-5) << "row " << r;
    ASSERT_EQ(batch.target_slot[r] >= 0, is_scored) << "row " << r;
    const TargetView t = batch.target(r);
    for (int64_t i = 0; i < t.size; ++i) {
      ASSERT_TRUE(t.tokens[i] >= 0 && t.tokens[i] < V) << "row " << r;
      ASSERT_TRUE(i == 0 || t.tokens[i - 1] < t.tokens[i]) << "row " << r << " not ascending";
      ASSERT_GT(t.probs[i], 0.0f) << "row " << r;
    }
  }
  ASSERT_FALSE(batch.target_offsets.empty());
  ASSERT_EQ(batch.target_offsets.front(), 0);
  ASSERT_TRUE(std::is_sorted(batch.target_offsets.begin(), batch.target_offsets.end()));
  ASSERT_EQ(batch.target_offsets.back(), static_cast<int64_t>(batch.target_tokens.size()));
  ASSERT_EQ(batch.target_probs.size(), batch.target_tokens.size());
}

inline bool same_batch(const Batch& a, const Batch& b) {
  return a.tokens == b.tokens && a.dense_target() == b.dense_target() && a.weight == b.weight;
}

// Scores every sequence of `batch` with logits(b, t, row) filling the V logits of the scored
// position t of sequence b; returns the metric results by name.
inline std::map<std::string, MetricResult> score_all(
    const Task& task, const Batch& batch,
    const std::function<void(int64_t, int64_t, float*)>& logits) {
  MetricAccumulator acc;
  const int V = batch.vocab;
  for (int64_t b = 0; b < batch.batch; ++b) {
    std::vector<float> rows;
    for (int64_t t = 0; t < batch.len; ++t) {
      if (batch.weight[b * batch.len + t] <= 0) continue;
      rows.resize(rows.size() + V);
      logits(b, t, rows.data() + rows.size() - V);
    }
    task.score(batch, b, rows.data(), acc);
  }
  std::map<std::string, MetricResult> out;
  for (const MetricResult& r : acc.results()) out[r.name] = r;
  return out;
}

// Logits that put `hi` on the tokens where the target row is positive and `lo` elsewhere.
inline void logits_from_target(const Batch& batch, int64_t b, int64_t t, float* out,
                               float hi = 0.0f, float lo = -100.0f) {
  const std::vector<float> target = batch.dense_target_row(b * batch.len + t);
  for (int j = 0; j < batch.vocab; ++j) out[j] = target[j] > 0 ? hi : lo;
}

// Pearson's chi-square statistic of `counts` against equal expected counts.
inline double chi_square_uniform(const std::vector<int64_t>& counts) {
  double total = 0;
  for (int64_t c : counts) total += static_cast<double>(c);
  const double expected = total / static_cast<double>(counts.size());
  double chi2 = 0;
  for (int64_t c : counts) chi2 += (c - expected) * (c - expected) / expected;
  return chi2;
}

// The upper 1e-4 quantile of the chi-square distribution with `df` degrees of freedom
// (Wilson–Hilferty approximation, z = 3.719): a uniform sampler fails 1 time in 10 000, and
// the seeds are fixed.
inline double chi_square_bound(double df) {
  const double z = 3.719;
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
}

}  // namespace normlab::testing
