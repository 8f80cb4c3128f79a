// The particle bridge over an experiment's runs (experiment.hpp, docs/particles.md "Bridge to
// trained models"): the NA-dynamics ODE run on each trained model's own attention, its
// predicted layer-by-layer token cosine against the one the depth probe measures.
#include <fmt/format.h>

#include <cmath>

#include "experiment/report_files.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/particles/bridge.hpp"
#include "normlab/particles/model_weights.hpp"
#include "normlab/report/plot.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/trainer.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

using report::number;
using report::read_csv;

// Runs the bridge on one finished run's final raw weights, on the depth probe's validation
// batch (the same sequences); writes RUN/probe_bridge.csv.
void bridge_run(const Experiment& e, const Variant& v, const fs::path& dir) {
  auto task = make_task_from_json(e.task);
  const std::unique_ptr<Model<float>> loaded = report::load_final_model(v, dir);
  Model<float>& model = *loaded;
  const int64_t n = e.probe_length > 0 ? e.probe_length : e.train.max_len;
  Rng rng(e.eval.seed);
  const Batch batch = task->make_batch(n, e.probe_batch, rng, /*validation=*/true);
  const particles::BridgeResult r = particles::run_bridge(model, batch, {});
  write_file_atomic(dir / "probe_bridge.csv", particles::bridge_csv(r));
}

bool has_particle_law(const ModelConfig& c) {
  try {
    particles::check_model_has_particle_law(c);
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

}  // namespace

void ensure_bridge_probe(const Experiment& e, const Variant& v, uint64_t seed,
                         const fs::path& dir) {
  if (!has_particle_law(v.model) || fs::exists(dir / "probe_bridge.csv")) return;
  std::fprintf(stderr, "particle bridge: %s seed %llu\n", v.label.c_str(),
               static_cast<unsigned long long>(seed));
  bridge_run(e, v, dir);
}

std::string bridge_report(const Experiment& e, const fs::path& out) {
  if (!e.probe_bridge) return "";
  std::string csv = "variant,seed,layer,predicted_cos,measured_cos\n";
  PlotSpec plot;
  plot.title =
      "token cosine against layer: the ODE's prediction (\"S ODE\") and the model (first seed)";
  plot.x_label = "layer";
  plot.integer_x = true;
  plot.y_label = "mean pairwise cosine";
  std::string table = fmt::format(
      "\nparticle bridge ({} validation sequences; first seed of each scheme)\n"
      "{:<22} {:>14} {:>14} {:>16}\n",
      e.probe_batch, "scheme", "predicted out", "measured out", "mean |difference|");
  std::string md = fmt::format(
      "\n**particle bridge** (the ODE on each model's own attention, docs/particles.md; {} "
      "validation sequences; first seed of each scheme)\n\n"
      "| scheme | predicted cos out | measured cos out | mean \\|difference\\| over layers |\n"
      "| --- | --- | --- | --- |\n",
      e.probe_batch);
  std::vector<std::string> skipped;
  for (const Variant& v : e.variants) {
    if (!has_particle_law(v.model)) {
      skipped.push_back(v.label);
      continue;
    }
    bool first_seed = true;
    for (uint64_t seed : e.seeds) {
      const fs::path dir = run_directory(out, v, seed);
      if (read_run_status(dir) != RunStatus::finished) continue;
      ensure_bridge_probe(e, v, seed, dir);
      PlotSeries predicted{v.label + " ODE", {}, {}}, measured{v.label, {}, {}};
      double diff_sum = 0;
      const auto rows = read_csv(dir / "probe_bridge.csv");
      for (const auto& row : rows) {
        csv += fmt::format("{},{},{},{},{}\n", csv_field(v.label), seed, row.at("layer"),
                           row.at("predicted_cos"), row.at("measured_cos"));
        predicted.x.push_back(number(row, "layer"));
        predicted.y.push_back(number(row, "predicted_cos"));
        measured.x.push_back(number(row, "layer"));
        measured.y.push_back(number(row, "measured_cos"));
        diff_sum += std::abs(predicted.y.back() - measured.y.back());
      }
      if (!first_seed || rows.empty()) continue;
      first_seed = false;
      const double mean_diff = diff_sum / static_cast<double>(rows.size());
      table += fmt::format("{:<22} {:>14.4f} {:>14.4f} {:>16.4f}\n", v.label, predicted.y.back(),
                           measured.y.back(), mean_diff);
      md += fmt::format("| {} | {:.4f} | {:.4f} | {:.4f} |\n", markdown_cell(v.label),
                        predicted.y.back(), measured.y.back(), mean_diff);
      plot.series.push_back(predicted);
      plot.series.push_back(measured);
    }
  }
  if (!skipped.empty()) {
    const std::string note =
        fmt::format("no particle law (not bridged): {}\n", fmt::join(skipped, ", "));
    table += note;
    md += "\n" + note;
  }
  write_file_atomic(out / "bridge.csv", csv);
  write_line_plot(out / "bridge_cosine.png", plot);
  md += report::markdown_figures(out, {{"bridge_cosine.png", "predicted and measured cosine"}});
  report::append_summary(out, md);
  return table;
}

}  // namespace normlab
