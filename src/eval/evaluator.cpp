#include "normlab/eval/evaluator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

namespace normlab {

namespace {

// The chance metrics this task has (the intersection of its metrics with
// sample_dependent_chance_metrics()).
std::vector<std::string> chance_metrics_of(const Task& task) {
  std::vector<std::string> out;
  for (const std::string& m : task.metric_names()) {
    const auto& all = sample_dependent_chance_metrics();
    if (std::find(all.begin(), all.end(), m) != all.end()) out.push_back(m);
  }
  return out;
}

// Hands each sequence of the batch its own rows of `logits` (rows × V, in `rows` order); with
// `logits` null, V equal logits per row (the uniform predictor).
void score_sequences(const Task& task, const Batch& batch, int64_t B,
                     const std::vector<int64_t>& rows, const float* logits,
                     MetricAccumulator& metrics) {
  const int V = task.vocab();
  std::vector<float> uniform;
  size_t k = 0;
  for (int64_t b = 0; b < B; ++b) {
    const size_t first = k;
    while (k < rows.size() && rows[k] < (b + 1) * batch.len) ++k;
    if (logits != nullptr) {
      task.score(batch, b, logits + first * V, metrics);
    } else {
      uniform.assign((k - first) * static_cast<size_t>(V), 0.0f);
      task.score(batch, b, uniform.data(), metrics);
    }
  }
}

// The chance rows of `chance` (the uniform predictor's metrics), renamed "<metric>_chance".
void append_chance_rows(const MetricAccumulator& chance, const std::vector<std::string>& names,
                        std::vector<MetricResult>& out) {
  for (MetricResult m : chance.results()) {
    if (std::find(names.begin(), names.end(), m.name) == names.end()) continue;
    m.name = chance_metric_name(m.name);
    out.push_back(std::move(m));
  }
}

}  // namespace

void for_each_eval_batch(const Task& task, const EvalConfig& config, int64_t n,
                         const EvalBatchVisitor& visit) {
  const int64_t seq_len = task.sequence_length(n);
  const int64_t per_call = std::clamp<int64_t>(config.max_rows / seq_len, 1, config.samples);
  Rng rng(config.seed ^ (static_cast<uint64_t>(n) * 0x9e3779b97f4a7c15ULL));
  std::vector<int64_t> rows;
  for (int64_t done = 0; done < config.samples; done += per_call) {
    const int64_t B = std::min(per_call, config.samples - done);
    const Batch batch = task.make_batch(n, B, rng, /*validation=*/true);
    rows.clear();
    for (int64_t k = 0; k < B * batch.len; ++k) {
      if (batch.weight[k] > 0) rows.push_back(k);
    }
    visit(batch, B, rows);
  }
}

const std::vector<std::string>& sample_dependent_chance_metrics() {
  static const std::vector<std::string> names = {"tvd"};
  return names;
}

std::string chance_metric_name(const std::string& metric) {
  return metric + "_chance";
}

std::vector<LengthResult> evaluate(Model<float>& model, const Task& task, const EvalConfig& config,
                                   const std::function<void(const LengthResult&)>& progress) {
  for (int64_t n : config.lengths) task.check_length(n);
  const std::vector<std::string> chance_names = chance_metrics_of(task);
  std::vector<LengthResult> out;
  for (int64_t n : config.lengths) {
    const auto t0 = std::chrono::steady_clock::now();
    LengthResult r;
    r.length = n;
    r.seq_len = task.sequence_length(n);
    MetricAccumulator metrics, chance;
    for_each_eval_batch(
        task, config, n, [&](const Batch& batch, int64_t B, const std::vector<int64_t>& rows) {
          const float* logits =
              model.forward_rows(batch.tokens.data(), B, batch.len, batch.fields, rows);
          score_sequences(task, batch, B, rows, logits, metrics);
          if (!chance_names.empty()) {
            score_sequences(task, batch, B, rows, nullptr, chance);
          }
        });
    r.metrics = metrics.results();
    append_chance_rows(chance, chance_names, r.metrics);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (progress) progress(r);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<LengthResult> evaluate_chance(const Task& task, const EvalConfig& config) {
  for (int64_t n : config.lengths) task.check_length(n);
  const std::vector<std::string> chance_names = chance_metrics_of(task);
  std::vector<LengthResult> out;
  for (int64_t n : config.lengths) {
    LengthResult r;
    r.length = n;
    r.seq_len = task.sequence_length(n);
    MetricAccumulator chance;
    for_each_eval_batch(task, config, n,
                        [&](const Batch& batch, int64_t B, const std::vector<int64_t>& rows) {
                          score_sequences(task, batch, B, rows, nullptr, chance);
                        });
    append_chance_rows(chance, chance_names, r.metrics);
    out.push_back(std::move(r));
  }
  return out;
}

std::string format_eval_table(const std::vector<LengthResult>& results) {
  if (results.empty()) return "";
  std::string s = fmt::format("{:>8} {:>8}", "length", "T");
  for (const MetricResult& m : results[0].metrics) s += fmt::format("  {:>26}", m.name);
  s += fmt::format("  {:>8}\n", "seconds");
  for (const LengthResult& r : results) {
    s += fmt::format("{:>8} {:>8}", r.length, r.seq_len);
    for (const MetricResult& m : r.metrics) {
      s += fmt::format("  {:>26}",
                       fmt::format("{:.4f} [{:.4f}, {:.4f}]", m.value, m.ci_low, m.ci_high));
    }
    s += fmt::format("  {:>8.2f}\n", r.seconds);
  }
  return s;
}

std::string eval_csv(const std::vector<LengthResult>& results) {
  std::string s = "length,seq_len,metric,value,ci_low,ci_high,count\n";
  for (const LengthResult& r : results) {
    for (const MetricResult& m : r.metrics) {
      s += fmt::format("{},{},{},{:.6g},{:.6g},{:.6g},{}\n", r.length, r.seq_len, m.name, m.value,
                       m.ci_low, m.ci_high, m.count);
    }
  }
  return s;
}

nlohmann::json eval_json(const std::vector<LengthResult>& results) {
  nlohmann::json j = nlohmann::json::array();
  for (const LengthResult& r : results) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const MetricResult& m : r.metrics) {
      metrics[m.name] = {
          {"value", m.value}, {"ci_low", m.ci_low}, {"ci_high", m.ci_high}, {"count", m.count}};
    }
    j.push_back({{"length", r.length},
                 {"seq_len", r.seq_len},
                 {"seconds", r.seconds},
                 {"metrics", metrics}});
  }
  return j;
}

}  // namespace normlab
