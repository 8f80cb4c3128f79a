#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "normlab/atomic_file.hpp"
#include "normlab/experiment.hpp"
#include "normlab/probes/line_fit.hpp"
#include "normlab/results_store.hpp"
#include "normlab/trainer.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

struct Row {
  std::string variant, weights, metric, status;
  uint64_t seed = 0;
  int64_t length = 0, seq_len = 0, count = 0;
  double value = NAN, ci_low = NAN, ci_high = NAN;
};

std::string num(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "nan";
}

}  // namespace

std::string collect_results(const Experiment& e, const fs::path& out) {
  std::vector<Row> rows;
  std::vector<StoredRun> stored_runs;
  std::map<std::string, int> diverged;  // variant → diverged seeds
  for (const Variant& v : e.variants) {
    for (uint64_t seed : e.seeds) {
      const fs::path dir = run_directory(out, v, seed);
      const RunStatus status = read_run_status(dir);
      if (status == RunStatus::diverged) ++diverged[v.label];
      stored_runs.push_back({v.label, scheme_label(v.model), to_string(v.model.norm),
                             to_string(status), dir.string(), seed});
      for (const std::string& w : e.weights) {
        const fs::path file = dir / ("eval_" + w + ".json");
        if (!fs::exists(file)) continue;
        const nlohmann::json j = nlohmann::json::parse(read_file(file));
        for (const auto& r : j.at("results")) {
          for (const auto& [metric, m] : r.at("metrics").items()) {
            Row row;
            row.variant = v.label;
            row.seed = seed;
            row.weights = w;
            row.length = r.at("length").get<int64_t>();
            row.seq_len = r.at("seq_len").get<int64_t>();
            row.metric = metric;
            row.status = to_string(status);
            auto number = [](const nlohmann::json& x) {
              return x.is_number() ? x.get<double>() : NAN;
            };
            row.value = number(m.at("value"));
            row.ci_low = number(m.at("ci_low"));
            row.ci_high = number(m.at("ci_high"));
            row.count = m.at("count").get<int64_t>();
            rows.push_back(row);
          }
        }
      }
    }
  }
  std::string csv =
      "experiment,variant,scheme,norm,seed,weights,length,seq_len,metric,value,ci_low,ci_high,"
      "count\n";
  std::map<std::string, const Variant*> by_label;
  for (const Variant& v : e.variants) by_label[v.label] = &v;
  for (const Row& r : rows) {
    const Variant& v = *by_label.at(r.variant);
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", e.name, r.variant,
                       scheme_label(v.model), to_string(v.model.norm), r.seed, r.weights, r.length,
                       r.seq_len, r.metric, num(r.value), num(r.ci_low), num(r.ci_high), r.count);
  }
  write_file_atomic(out / "results.csv", csv);
  std::vector<StoredResult> stored;
  for (const Row& r : rows) {
    const Variant& v = *by_label.at(r.variant);
    stored.push_back({r.variant, scheme_label(v.model), to_string(v.model.norm), r.weights,
                      r.metric, r.seed, r.length, r.seq_len, r.count, r.value, r.ci_low,
                      r.ci_high});
  }
  write_results_store(out / "results.sqlite", e.name, to_json(e).dump(), stored_runs, stored);

  // Mean ± t-interval across seeds, per (variant, weights, metric, length).
  struct Key {
    std::string metric, variant, weights;
    int64_t length;
    bool operator<(const Key& o) const {
      return std::tie(metric, variant, weights, length) <
             std::tie(o.metric, o.variant, o.weights, o.length);
    }
  };
  std::map<Key, std::vector<double>> groups;
  std::vector<std::string> metrics;
  std::set<int64_t> lengths;
  for (const Row& r : rows) {
    groups[{r.metric, r.variant, r.weights, r.length}].push_back(r.value);
    if (std::find(metrics.begin(), metrics.end(), r.metric) == metrics.end()) {
      metrics.push_back(r.metric);
    }
    lengths.insert(r.length);
  }
  std::string summary_csv = "variant,weights,metric,length,mean,ci_half_width,seeds\n";
  // Lengths beyond the longest training length are extrapolation; their columns are marked.
  const auto column = [&](int64_t n) {
    return fmt::format("n={}{}", n, n > e.train.max_len ? "*" : "");
  };
  const std::string legend =
      fmt::format("trained on lengths {}..{}; * marks lengths beyond training (extrapolation)\n",
                  e.train.min_len, e.train.max_len);
  std::string table = "\n" + legend, md = "\n" + legend;
  for (const std::string& metric : metrics) {
    table += fmt::format("\n{} (mean ± 95% CI across seeds)\n", metric);
    std::string header = fmt::format("{:<28} {:<5}", "scheme", "wts");
    md += fmt::format("\n**{}** (mean ± 95% CI across seeds)\n\n| scheme | weights |", metric);
    std::string md_rule = "| --- | --- |";
    for (int64_t n : lengths) {
      header += fmt::format(" {:>16}", column(n));
      md += fmt::format(" {} |", column(n));
      md_rule += " --- |";
    }
    table += header + "\n";
    md += "\n" + md_rule + "\n";
    for (const Variant& v : e.variants) {
      for (const std::string& w : e.weights) {
        std::string line = fmt::format("{:<28} {:<5}", v.label, w);
        std::string md_line = fmt::format("| {} | {} |", v.label, w);
        bool any = false;
        for (int64_t n : lengths) {
          auto it = groups.find({metric, v.label, w, n});
          if (it == groups.end()) {
            line += fmt::format(" {:>16}", "-");
            md_line += " - |";
            continue;
          }
          any = true;
          const std::vector<double>& xs = it->second;
          double mean = 0;
          for (double x : xs) mean += x;
          mean /= xs.size();
          double half = NAN;
          if (xs.size() > 1) {
            double ss = 0;
            for (double x : xs) ss += (x - mean) * (x - mean);
            half = student_t_quantile(0.975, static_cast<double>(xs.size() - 1)) *
                   std::sqrt(ss / (xs.size() - 1)) / std::sqrt(static_cast<double>(xs.size()));
          }
          const std::string cell = std::isfinite(half) ? fmt::format("{:.3f} ± {:.3f}", mean, half)
                                                       : fmt::format("{:.3f}", mean);
          line += fmt::format(" {:>16}", cell);
          md_line += fmt::format(" {} |", cell);
          summary_csv += fmt::format("{},{},{},{},{},{},{}\n", v.label, w, metric, n, num(mean),
                                     num(half), xs.size());
        }
        if (any) {
          table += line + "\n";
          md += md_line + "\n";
        }
      }
    }
  }
  for (const auto& [variant, count] : diverged) {
    const std::string note =
        fmt::format("{}: {} of {} seeds diverged (no metrics)\n", variant, count, e.seeds.size());
    table += note;
    md += "\n" + note;
  }
  write_file_atomic(out / "summary.csv", summary_csv);
  write_file_atomic(out / "summary.md", fmt::format("# {}\n{}", e.name, md));
  return table;
}

}  // namespace normlab
