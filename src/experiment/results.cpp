#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "normlab/experiment/experiment.hpp"
#include "normlab/experiment/run_rows.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/io/number_text.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/probes/seed_interval.hpp"
#include "normlab/store/provenance.hpp"
#include "normlab/store/results_store.hpp"
#include "normlab/tasks/metrics.hpp"
#include "normlab/train/trainer.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

struct Row {
  std::string variant, weights, metric, status;
  uint64_t seed = 0;
  int64_t length = 0, seq_len = 0, count = 0;
  double value = NAN, ci_low = NAN, ci_high = NAN;
};

}  // namespace

std::string collect_results(const Experiment& e, const fs::path& out) {
  // Every run's rows into the store again (idempotent: each run's rows are replaced whole), so
  // runs finished by an earlier process or an older normlab are there too.
  ResultsStore store(out / "results.sqlite");
  const int64_t experiment_id = store.begin_experiment(experiment_record(e));
  std::vector<Row> rows;
  std::map<std::string, int> diverged;  // variant → diverged seeds
  std::string csv = csv_row({"experiment", "variant", "scheme", "norm", "seed", "weights", "length",
                             "seq_len", "metric", "value", "ci_low", "ci_high", "count"});
  // One row per run, diverged ones too (they have no rows in results.csv): what a claim about
  // divergence reads (docs/experiments.md).
  std::string runs_csv = csv_row({"experiment", "variant", "scheme", "seed", "status", "diverged"});
  for (const Variant& v : e.variants) {
    for (uint64_t seed : e.seeds) {
      const RunRows run = gather_run_rows(e, v, seed, out);
      store.record_run(experiment_id, run);
      const bool run_diverged = run.run.status == to_string(RunStatus::diverged);
      if (run_diverged) ++diverged[v.label];
      runs_csv += csv_row({e.name, v.label, run.run.scheme, std::to_string(seed), run.run.status,
                           run_diverged ? "1" : "0"});
      for (const ResultRecord& x : run.results) {
        Row row;
        row.variant = v.label;
        row.seed = seed;
        row.weights = x.weights;
        row.length = x.length;
        row.seq_len = x.seq_len;
        row.metric = x.metric;
        row.status = run.run.status;
        row.value = x.value;
        row.ci_low = x.ci_low;
        row.ci_high = x.ci_high;
        row.count = x.count;
        rows.push_back(row);
        csv += csv_row({e.name, v.label, run.run.scheme, run.run.norm, std::to_string(seed),
                        x.weights, std::to_string(x.length), std::to_string(x.seq_len), x.metric,
                        number_text(x.value), number_text(x.ci_low), number_text(x.ci_high),
                        std::to_string(x.count)});
      }
    }
  }
  write_file_atomic(out / "results.csv", csv);
  write_file_atomic(out / "runs.csv", runs_csv);
  store.finish_experiment(experiment_id, utc_now());
  // The store is this study: runs of an earlier version (other seeds, another sweep) leave it,
  // so that `normlab results` and summary.csv average the same runs.
  const int64_t dropped = store.keep_only_runs_of(experiment_id);

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
  std::string summary_csv =
      "variant,weights,metric,length,mean,ci_half_width,seeds,ci_low,ci_high\n";
  // Lengths beyond the longest training length are extrapolation; their columns are marked.
  const auto column = [&](int64_t n) {
    return fmt::format("n={}{}", n, n > e.train.max_len ? "*" : "");
  };
  const std::string legend =
      fmt::format("trained on lengths {}..{}; * marks lengths beyond training (extrapolation)\n",
                  e.train.min_len, e.train.max_len);
  std::string table = "\n" + legend, md = "\n" + legend;
  for (const std::string& metric : metrics) {
    table += fmt::format("\n{} (mean [95% interval] across seeds)\n", metric);
    std::string header = fmt::format("{:<28} {:<5}", "scheme", "wts");
    md +=
        fmt::format("\n**{}** (mean [95% interval] across seeds)\n\n| scheme | weights |", metric);
    std::string md_rule = "| --- | --- |";
    for (int64_t n : lengths) {
      header += fmt::format(" {:>21}", column(n));
      md += fmt::format(" {} |", column(n));
      md_rule += " --- |";
    }
    table += header + "\n";
    md += "\n" + md_rule + "\n";
    for (const Variant& v : e.variants) {
      for (const std::string& w : e.weights) {
        std::string line = fmt::format("{:<28} {:<5}", v.label, w);
        std::string md_line = fmt::format("| {} | {} |", markdown_cell(v.label), w);
        bool any = false;
        for (int64_t n : lengths) {
          auto it = groups.find({metric, v.label, w, n});
          if (it == groups.end()) {
            line += fmt::format(" {:>21}", "-");
            md_line += " - |";
            continue;
          }
          any = true;
          const SeedInterval c = interval_across_seeds(metric, it->second);
          const double mean = c.mean, half = c.half, low = c.low, high = c.high;
          const std::string cell = interval_cell(mean, low, high);
          line += fmt::format(" {:>21}", cell);
          md_line += fmt::format(" {} |", cell);
          summary_csv +=
              csv_row({v.label, w, metric, std::to_string(n), number_text(mean), number_text(half),
                       std::to_string(c.seeds), number_text(low), number_text(high)});
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
  if (dropped > 0) {
    table += fmt::format(
        "{} run(s) of an earlier version of this study (other seeds or sweep points) are no "
        "longer in the store; their folders stay in {}\n",
        dropped, (out / "runs").string());
  }
  return table;
}

}  // namespace normlab
