// The variance probe over an experiment's runs: vanishing variance of the attention output
// (2504.02827, Figures 2–3), aggregated into OUT/features*.csv and plots (experiment.hpp,
// docs/experiments.md).
//
// Per (variant, seed, layer, site), over the probed task lengths N (docs/probes.md, variance):
//   slope       least-squares slope of ln(global_std) against ln N (line_fit.hpp), with its
//               95% interval [slope_low, slope_high]
//   mean_drift  |global_mean(N_max) − global_mean(N_min)| / global_std(N_min)
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "experiment/report_files.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/io/number_text.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/io/progress.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/probes/line_fit.hpp"
#include "normlab/probes/variance_probe.hpp"
#include "normlab/report/plot.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/trainer.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

using report::cell;
using report::CsvRow;
using report::integer;
using report::number;
using report::read_csv;

constexpr const char* kPrefix = "probe_variance_task";

// Probes one finished run's final raw weights on the task's inputs; writes
// RUN/probe_variance_task{_fit,_hist}.csv, then RUN/probe_variance_task.csv (the marker).
void probe_features_of_run(const Experiment& e, const Variant& v, const fs::path& dir) {
  auto task = make_task_from_json(e.task);
  const std::unique_ptr<Model<float>> loaded = report::load_final_model(v, dir);
  Model<float>& model = *loaded;
  VarianceConfig vc;
  vc.sweep.lengths = e.probe_lengths;
  vc.sweep.samples = e.probe_samples;
  vc.sweep.seed = e.eval.seed;
  vc.hist_lengths = {e.probe_lengths.front(), e.probe_lengths.back()};
  std::vector<double> costs;
  for (int64_t n : e.probe_lengths) {
    costs.push_back(forward_cost(task->sequence_length(n), v.model.width));
  }
  ItemProgress progress(costs);
  const VarianceResult r =
      run_variance_probe(model, ProbeInput::from_task(*task), vc, [&](const SweepLength& l) {
        progress.item_done(fmt::format("length {} (T = {})", l.length, l.seq_len));
      });
  const std::string prefix = (dir / kPrefix).string();
  write_file_atomic(prefix + "_fit.csv", variance_fit_csv(r));
  write_file_atomic(prefix + "_hist.csv", variance_hist_csv(r));
  write_file_atomic(prefix + ".csv", variance_csv(r));  // last: marks the probe done
}

struct SiteRows {
  int layer = 0;
  std::string site;
  std::vector<const CsvRow*> rows;  // ascending length
};

// The rows of one run grouped by (layer, site), heads left out, in file order.
std::vector<SiteRows> group_sites(const std::vector<CsvRow>& rows, const fs::path& file) {
  std::vector<SiteRows> out;
  std::map<std::pair<int, std::string>, size_t> index;
  for (const CsvRow& row : rows) {
    if (cell(row, "site") == "head") continue;
    const auto key =
        std::make_pair(static_cast<int>(integer(row, "layer", file)), cell(row, "site"));
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, out.size()).first;
      out.push_back({key.first, key.second, {}});
    }
    out[it->second].rows.push_back(&row);
  }
  return out;
}

struct SiteFit {
  LineFit fit;
  double mean_drift = 0;
};

SiteFit fit_site(const SiteRows& s) {
  std::vector<double> x, y;
  for (const CsvRow* row : s.rows) {
    const double n = number(*row, "length"), sd = number(*row, "global_std");
    if (std::isfinite(sd) && sd > 0 && n > 0) {
      x.push_back(std::log(n));
      y.push_back(std::log(sd));
    }
  }
  SiteFit f;
  f.fit = fit_line(x, y);
  const CsvRow& first = *s.rows.front();
  const CsvRow& last = *s.rows.back();
  f.mean_drift = std::abs(number(last, "global_mean") - number(first, "global_mean")) /
                 number(first, "global_std");
  return f;
}

// Mean over seeds per length: x = length, y = the mean of `column`.
PlotSeries mean_per_length(const std::string& label,
                           const std::map<double, std::vector<double>>& by) {
  PlotSeries s{label, {}, {}};
  for (const auto& [n, values] : by) {
    double sum = 0;
    for (double v : values) sum += v;
    s.x.push_back(n);
    s.y.push_back(sum / values.size());
  }
  return s;
}

PlotSpec plot_spec(const std::string& title, const std::string& x_label, const std::string& y_label,
                   bool log_x, bool log_y) {
  PlotSpec spec;
  spec.title = title;
  spec.x_label = x_label;
  spec.y_label = y_label;
  spec.log_x = log_x;
  spec.log_y = log_y;
  return spec;
}

}  // namespace

void ensure_variance_probe(const Experiment& e, const Variant& v, uint64_t seed,
                           const fs::path& dir) {
  if (fs::exists(dir / (std::string(kPrefix) + ".csv"))) return;
  std::fprintf(stderr, "variance probe: %s seed %llu\n", v.label.c_str(),
               static_cast<unsigned long long>(seed));
  probe_features_of_run(e, v, dir);
}

std::string features_report(const Experiment& e, const fs::path& out) {
  if (!e.probe_variance) return "";
  std::string features_csv =
      "variant,seed,layer,site,length,seq_len,rows,mean_feature_std,global_mean,global_var,"
      "global_std\n";
  std::string fit_csv = "variant,seed,layer,site,slope,slope_low,slope_high,mean_drift\n";
  const int64_t n_min = e.probe_lengths.front(), n_max = e.probe_lengths.back();
  PlotSpec std_plot = plot_spec("global std of attn_out (layer 0; mean over seeds) against N",
                                "task length N", "global std", true, true);
  PlotSpec mean_plot = plot_spec("global mean of attn_out (layer 0; mean over seeds) against N",
                                 "task length N", "global mean", true, false);
  PlotSpec hist_plot = plot_spec("", "attn_out value (layer 0)", "density", false, false);
  std::vector<uint64_t> hist_seeds;
  std::string seed_list;  // "pre 1, peri 2": the seed of each variant's histograms
  std::string table = fmt::format(
      "\nvariance probe (task inputs, {} sequences per length, N = {} .. {}; layer 0)\n"
      "{:<22} {:>5} {:<16} {:>11} {:>11} {:>9}  {:>22} {:>10}\n",
      e.probe_samples, n_min, n_max, "scheme", "seed", "site", "std N_min", "std N_max", "slope",
      "95% interval", "mean drift");
  std::string md = fmt::format(
      "\n**variance probe** (task inputs, {} sequences per length, N = {} .. {}; layer 0; slope "
      "of ln global std against ln N)\n\n"
      "| scheme | seed | site | std N_min | std N_max | slope | 95% interval | mean drift |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- |\n",
      e.probe_samples, n_min, n_max);
  for (const Variant& v : e.variants) {
    std::map<double, std::vector<double>> std_by, mean_by;  // attn_out layer 0, per length
    bool first_seed = true;
    for (uint64_t seed : e.seeds) {
      const fs::path dir = run_directory(out, v, seed);
      if (read_run_status(dir) != RunStatus::finished) continue;
      ensure_variance_probe(e, v, seed, dir);
      const fs::path file = dir / (std::string(kPrefix) + ".csv");
      const std::vector<CsvRow> rows = read_csv(file);
      for (const SiteRows& s : group_sites(rows, file)) {
        for (const CsvRow* row : s.rows) {
          features_csv +=
              fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(v.label), seed, s.layer,
                          s.site, cell(*row, "length"), cell(*row, "seq_len"), cell(*row, "rows"),
                          cell(*row, "mean_feature_std"), cell(*row, "global_mean"),
                          cell(*row, "global_var"), cell(*row, "global_std"));
          if (s.layer == 0 && s.site == "attn_out") {
            std_by[number(*row, "length")].push_back(number(*row, "global_std"));
            mean_by[number(*row, "length")].push_back(number(*row, "global_mean"));
          }
        }
        const SiteFit f = fit_site(s);
        fit_csv += fmt::format("{},{},{},{},{},{},{},{}\n", csv_field(v.label), seed, s.layer,
                               s.site, number_text(f.fit.slope), number_text(f.fit.slope_ci_low),
                               number_text(f.fit.slope_ci_high), number_text(f.mean_drift));
        if (s.layer != 0 || (s.site != "attn_out" && s.site != "attn_out_normed")) continue;
        const double sd_min = number(*s.rows.front(), "global_std");
        const double sd_max = number(*s.rows.back(), "global_std");
        const std::string ci = fmt::format("[{}, {}]", number_text(f.fit.slope_ci_low),
                                           number_text(f.fit.slope_ci_high));
        table += fmt::format("{:<22} {:>5} {:<16} {:>11} {:>11} {:>9}  {:>22} {:>10}\n", v.label,
                             seed, s.site, number_text(sd_min), number_text(sd_max),
                             number_text(f.fit.slope), ci, number_text(f.mean_drift));
        md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(v.label),
                          seed, s.site, number_text(sd_min), number_text(sd_max),
                          number_text(f.fit.slope), ci, number_text(f.mean_drift));
      }
      if (!first_seed) continue;
      first_seed = false;
      hist_seeds.push_back(seed);
      seed_list += fmt::format("{}{} {}", seed_list.empty() ? "" : ", ", v.label, seed);
      // Histograms of the first seed: attn_out of layer 0 at the shortest and longest N.
      std::map<std::string, PlotSeries> by_length;
      for (const CsvRow& row : read_csv(dir / (std::string(kPrefix) + "_hist.csv"))) {
        if (cell(row, "layer") != "0" || cell(row, "site") != "attn_out") continue;
        PlotSeries& s = by_length[cell(row, "length")];
        s.label = fmt::format("{}, N = {} (seed {})", v.label, cell(row, "length"), seed);
        s.x.push_back(0.5 * (number(row, "bin_low") + number(row, "bin_high")));
        s.y.push_back(number(row, "density"));
      }
      for (auto& [length, s] : by_length) hist_plot.series.push_back(std::move(s));
    }
    if (std_by.empty()) continue;
    std_plot.series.push_back(mean_per_length(v.label, std_by));
    mean_plot.series.push_back(mean_per_length(v.label, mean_by));
  }
  // N^(−1/2) through the first variant's first point.
  if (!std_plot.series.empty() && !std_plot.series[0].x.empty()) {
    const PlotSeries& first = std_plot.series[0];
    PlotSeries ref{"N^-1/2", first.x, {}};
    for (double n : first.x) ref.y.push_back(first.y[0] * std::sqrt(first.x[0] / n));
    std_plot.series.push_back(ref);
  }
  bool same_seed = !hist_seeds.empty();
  for (uint64_t s : hist_seeds) same_seed = same_seed && s == hist_seeds.front();
  hist_plot.title =
      fmt::format("attn_out (layer 0) at N = {} and N = {}, {}", n_min, n_max,
                  same_seed ? fmt::format("seed {}", hist_seeds.front()) : "seeds " + seed_list);
  write_file_atomic(out / "features.csv", features_csv);
  write_file_atomic(out / "features_fit.csv", fit_csv);
  write_line_plot(out / "features_std.png", std_plot);
  write_line_plot(out / "features_mean.png", mean_plot);
  write_line_plot(out / "features_hist.png", hist_plot);
  md += report::markdown_figures(out, {{"features_std.png", "global std against N"},
                                       {"features_mean.png", "global mean against N"},
                                       {"features_hist.png", "attn_out histograms"}});
  report::append_summary(out, md);
  return table;
}

}  // namespace normlab
