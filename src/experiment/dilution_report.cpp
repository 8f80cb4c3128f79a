// The dilution probe over a set_complement study's runs (2510.08341; experiment.hpp,
// docs/experiments.md): OUT/dilution.csv, OUT/dilution_fit.csv and OUT/dilution.png.
//
// Sites (docs/probes.md, dilution): "logits" the final logits, "branch" U·y with y the
// attention output before any norm, "branch_normed" U·N_out(y) (schemes with an output norm).
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "experiment/report_files.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/probes/dilution_probe.hpp"
#include "normlab/report/plot.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/trainer.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

using report::cell;
using report::CsvRow;
using report::number;
using report::read_csv;

// Probes one finished run's final raw weights; writes RUN/probe_dilution_fit.csv, then
// RUN/probe_dilution.csv (the marker).
void probe_dilution_of_run(const Experiment& e, const Variant& v, const fs::path& dir) {
  auto task = make_task_from_json(e.task);
  const std::unique_ptr<Model<float>> loaded = report::load_final_model(v, dir);
  Model<float>& model = *loaded;
  DilutionConfig dc;
  dc.samples = e.probe_samples;
  dc.seed = e.eval.seed;
  const DilutionResult r = run_dilution_probe(model, *task, dc);
  write_file_atomic(dir / "probe_dilution_fit.csv", dilution_fit_csv(r));
  write_file_atomic(dir / "probe_dilution.csv", dilution_csv(r));  // last: marks the probe done
}

}  // namespace

void ensure_dilution_probe(const Experiment& e, const Variant& v, uint64_t seed,
                           const fs::path& dir) {
  if (fs::exists(dir / "probe_dilution.csv")) return;
  std::fprintf(stderr, "dilution probe: %s seed %llu\n", v.label.c_str(),
               static_cast<unsigned long long>(seed));
  probe_dilution_of_run(e, v, dir);
}

std::string dilution_report(const Experiment& e, const fs::path& out) {
  if (!e.probe_dilution) return "";
  std::string gaps_csv = "variant,seed,site,s,gap,gap_low,gap_high\n";
  std::string fit_csv = "variant,seed,site,slope,slope_low,slope_high\n";
  PlotSpec plot;
  plot.x_label = "input size s";
  plot.y_label = "|mean logit gap|, absent - present";
  plot.log_x = plot.log_y = true;
  std::vector<uint64_t> plot_seeds;
  std::string seed_list;  // "pre 1, peri 2": the seed of each variant's lines
  std::string table = fmt::format(
      "\ndilution probe ({} sequences per size; slope of ln|gap| against ln s)\n"
      "{:<22} {:>5} {:<14} {:>10} {:>10} {:>9}  {:>22}\n",
      e.probe_samples, "scheme", "seed", "site", "gap s=1", "gap s=max", "slope", "95% interval");
  std::string md = fmt::format(
      "\n**dilution probe** ({} sequences per size; slope of ln|gap| against ln s)\n\n"
      "| scheme | seed | site | gap s=1 | gap s=max | slope | 95% interval |\n"
      "| --- | --- | --- | --- | --- | --- | --- |\n",
      e.probe_samples);
  double ref_s = 0, ref_gap = 0;
  for (const Variant& v : e.variants) {
    bool first_seed = true;
    for (uint64_t seed : e.seeds) {
      const fs::path dir = run_directory(out, v, seed);
      if (read_run_status(dir) != RunStatus::finished) continue;
      ensure_dilution_probe(e, v, seed, dir);
      std::map<std::string, PlotSeries> series;                         // per site, first seed only
      std::map<std::string, std::pair<std::string, std::string>> ends;  // site → gap at s min, max
      for (const CsvRow& row : read_csv(dir / "probe_dilution.csv")) {
        const std::string site = cell(row, "site");
        gaps_csv +=
            fmt::format("{},{},{},{},{},{},{}\n", csv_field(v.label), seed, site, cell(row, "s"),
                        cell(row, "gap"), cell(row, "gap_low"), cell(row, "gap_high"));
        if (ends.count(site) == 0) ends[site].first = cell(row, "gap");
        ends[site].second = cell(row, "gap");
        PlotSeries& s = series[site];
        s.label = fmt::format("{} {} (seed {})", v.label, site, seed);
        s.x.push_back(number(row, "s"));
        s.y.push_back(std::abs(number(row, "gap")));
      }
      for (const CsvRow& row : read_csv(dir / "probe_dilution_fit.csv")) {
        const std::string site = cell(row, "site");
        fit_csv += fmt::format("{},{},{},{},{},{}\n", csv_field(v.label), seed, site,
                               cell(row, "slope"), cell(row, "slope_low"), cell(row, "slope_high"));
        const std::string ci =
            fmt::format("[{}, {}]", cell(row, "slope_low"), cell(row, "slope_high"));
        table += fmt::format("{:<22} {:>5} {:<14} {:>10} {:>10} {:>9}  {:>22}\n", v.label, seed,
                             site, ends[site].first, ends[site].second, cell(row, "slope"), ci);
        md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(v.label), seed,
                          site, ends[site].first, ends[site].second, cell(row, "slope"), ci);
      }
      if (!first_seed) continue;
      first_seed = false;
      plot_seeds.push_back(seed);
      seed_list += fmt::format("{}{} {}", seed_list.empty() ? "" : ", ", v.label, seed);
      for (auto& [site, s] : series) {
        if (ref_s == 0 && site == "branch" && !s.x.empty()) {
          ref_s = s.x.front();
          ref_gap = s.y.front();
        }
        plot.series.push_back(std::move(s));
      }
    }
  }
  if (ref_s > 0 && !plot.series.empty()) {  // 1/s through the first branch point
    PlotSeries ref{"1/s", plot.series[0].x, {}};
    for (double s : ref.x) ref.y.push_back(ref_gap * ref_s / s);
    plot.series.push_back(ref);
  }
  bool same_seed = !plot_seeds.empty();
  for (uint64_t s : plot_seeds) same_seed = same_seed && s == plot_seeds.front();
  plot.title =
      fmt::format("logit gap at the query against s, {}",
                  same_seed ? fmt::format("seed {}", plot_seeds.front()) : "seeds " + seed_list);
  write_file_atomic(out / "dilution.csv", gaps_csv);
  write_file_atomic(out / "dilution_fit.csv", fit_csv);
  write_line_plot(out / "dilution.png", plot);
  md += report::markdown_figures(out, {{"dilution.png", "logit gap against s"}});
  report::append_summary(out, md);
  return table;
}

}  // namespace normlab
