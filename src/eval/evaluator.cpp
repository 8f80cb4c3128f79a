#include "normlab/evaluator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

namespace normlab {

std::vector<LengthResult> evaluate(Model<float>& model, const Task& task, const EvalConfig& config,
                                   const std::function<void(const LengthResult&)>& progress) {
  for (int64_t n : config.lengths) task.check_length(n);
  const int V = task.vocab();
  std::vector<LengthResult> out;
  std::vector<int64_t> rows;
  for (int64_t n : config.lengths) {
    const auto t0 = std::chrono::steady_clock::now();
    LengthResult r;
    r.length = n;
    r.seq_len = task.sequence_length(n);
    const int64_t per_call = std::clamp<int64_t>(config.max_rows / r.seq_len, 1, config.samples);
    Rng rng(config.seed ^ (static_cast<uint64_t>(n) * 0x9e3779b97f4a7c15ULL));
    MetricAccumulator metrics;
    for (int64_t done = 0; done < config.samples; done += per_call) {
      const int64_t B = std::min(per_call, config.samples - done);
      const Batch batch = task.make_batch(n, B, rng, /*validation=*/true);
      rows.clear();
      for (int64_t k = 0; k < B * batch.len; ++k) {
        if (batch.weight[k] > 0) rows.push_back(k);
      }
      const float* logits =
          model.forward_rows(batch.tokens.data(), B, batch.len, batch.fields, rows);
      // Rows are grouped by sequence in order; hand each sequence its own rows.
      size_t k = 0;
      for (int64_t b = 0; b < B; ++b) {
        const size_t first = k;
        while (k < rows.size() && rows[k] < (b + 1) * batch.len) ++k;
        task.score(batch, b, logits + first * V, metrics);
      }
    }
    r.metrics = metrics.results();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (progress) progress(r);
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
