// Loss curves across the runs of an experiment: OUT/curves.csv from every run's metrics.jsonl,
// and OUT/curves.png, the validation loss against the step per variant (docs/experiments.md),
// on a log loss axis: the first steps' losses are far above the rest and would press the
// curves flat against the bottom of a linear axis.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "experiment/report_files.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/experiment/run_rows.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/report/plot.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

std::string cell(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "";
}

}  // namespace

bool write_curves(const Experiment& e, const fs::path& out) {
  std::string csv = "variant,seed,step,train_loss,val_loss\n";
  PlotSpec spec;
  spec.title = fmt::format("{}: validation loss", e.name);
  spec.x_label = "step";
  spec.y_label = "validation loss (nats, log scale)";
  spec.log_y = true;
  for (const Variant& v : e.variants) {
    // step → validation losses of the seeds that have one; plotted where every seed has one.
    std::map<int64_t, std::vector<double>> val;
    for (uint64_t seed : e.seeds) {
      const fs::path file = run_directory(out, v, seed) / "metrics.jsonl";
      for (const auto& [step, p] : read_run_curve(file)) {
        csv += csv_row({v.label, std::to_string(seed), std::to_string(step), cell(p.train_loss),
                        cell(p.val_loss)});
        if (!std::isnan(p.val_loss)) val[step].push_back(p.val_loss);
      }
    }
    PlotSeries series;
    series.label = e.seeds.size() > 1
                       ? fmt::format("{} (mean of {} seeds)", v.label, e.seeds.size())
                       : v.label;
    for (const auto& [step, xs] : val) {
      if (xs.size() != e.seeds.size()) continue;
      double mean = 0;
      for (double x : xs) mean += x;
      series.x.push_back(static_cast<double>(step));
      series.y.push_back(mean / static_cast<double>(xs.size()));
    }
    if (!series.x.empty()) spec.series.push_back(std::move(series));
  }
  write_file_atomic(out / "curves.csv", csv);
  if (spec.series.empty()) return false;  // no periodic validation in this experiment
  const bool plotted = write_line_plot(out / "curves.png", spec);
  report::append_summary(out, report::markdown_figures(out, {{"curves.png", "validation loss"}}));
  return plotted;
}

}  // namespace normlab
