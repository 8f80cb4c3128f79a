// Evaluation across lengths: for each task length n, `samples` validation sequences
// (Task::make_batch with validation = true; seeded by seed and n, so every model sees the same
// inputs), logits at the scored positions only
// (Model::forward_rows, streaming attention), every metric of the task with its 95% interval.
//
// Chance rows: a metric whose chance level depends on the samples (TVD) also gets the row
// "<metric>_chance", the same metric of the uniform-over-the-vocabulary predictor (all logits
// equal, so softmax = 1/V everywhere) on the same samples: the floor of design rule D1
// (docs/claims.md, docs/tasks.md "Floor and ceiling").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "normlab/model/model.hpp"
#include "normlab/tasks/metrics.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab {

struct EvalConfig {
  std::vector<int64_t> lengths = {16, 64, 256, 1024};  // task lengths n
  int64_t samples = 256;                               // sequences per length
  uint64_t seed = 20251010;                            // evaluation data seed
  int64_t max_rows = 1 << 16;  // rows (B·T) per forward call, bounds memory at long lengths
};

struct LengthResult {
  int64_t length = 0;   // task length n
  int64_t seq_len = 0;  // model sequence length T
  double seconds = 0;   // evaluation time at this length
  std::vector<MetricResult> metrics;
};

// Throws UsageError (naming task, length and range) before doing any work if a length is
// invalid. `progress` (may be empty) is called after each length. The task's metrics, then its
// chance rows.
std::vector<LengthResult> evaluate(Model<float>& model, const Task& task, const EvalConfig& config,
                                   const std::function<void(const LengthResult&)>& progress = {});

// The samples evaluate() scores at task length n: calls visit(batch, B, rows) for each batch of
// B sequences, in order (one Rng per length, seeded by config.seed and n; at most
// config.max_rows rows per batch); `rows` are the scored positions b·T + t, grouped by sequence
// in order.
using EvalBatchVisitor =
    std::function<void(const Batch& batch, int64_t B, const std::vector<int64_t>& rows)>;
void for_each_eval_batch(const Task& task, const EvalConfig& config, int64_t n,
                         const EvalBatchVisitor& visit);

// The metrics that get a chance row ("tvd") and a chance row's name ("tvd" → "tvd_chance").
const std::vector<std::string>& sample_dependent_chance_metrics();
std::string chance_metric_name(const std::string& metric);

// Only the chance rows, on the samples evaluate() draws for the same task and config, without a
// model: for tables written before the rows were recorded.
std::vector<LengthResult> evaluate_chance(const Task& task, const EvalConfig& config);

// Table with one row per length and a "value [low, high]" column per metric.
std::string format_eval_table(const std::vector<LengthResult>& results);
// CSV: length,seq_len,metric,value,ci_low,ci_high,count
std::string eval_csv(const std::vector<LengthResult>& results);
nlohmann::json eval_json(const std::vector<LengthResult>& results);

}  // namespace normlab
