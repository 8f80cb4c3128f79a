// The depth probe over an experiment's runs, and its tables and plots (experiment.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "experiment/report_files.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/probes/depth_probe.hpp"
#include "normlab/report/plot.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/trainer.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

using report::number;
using report::read_csv;

// Probes one finished run's final raw weights; writes RUN/probe_depth.csv,
// RUN/probe_depth_params.csv and RUN/probe_depth_blocks.csv (block sums of `block_size`
// sublayers for an additive scheme).
void probe_depth_of_run(const Experiment& e, const Variant& v, const fs::path& dir,
                        int block_size) {
  auto task = make_task_from_json(e.task);
  const std::unique_ptr<Model<float>> loaded = report::load_final_model(v, dir);
  Model<float>& model = *loaded;
  const int64_t n = e.probe_length > 0 ? e.probe_length : e.train.max_len;
  Rng rng(e.eval.seed);
  const Batch batch = task->make_batch(n, e.probe_batch, rng, /*validation=*/true);
  const DepthResult r =
      run_depth_probe(model, batch, int64_t{1024} << 20, block_size, loss_logits(e.train, *task));
  write_file_atomic(dir / "probe_depth_params.csv", depth_params_csv(r));
  write_file_atomic(dir / "probe_depth_blocks.csv", depth_blocks_csv(r));
  write_file_atomic(dir / "probe_depth.csv", depth_csv(r));  // last: marks the probe done
}

// Layer, block and stream-position axes: integer ticks only.
PlotSpec depth_plot(const std::string& title, const std::string& x_label,
                    const std::string& y_label, bool log_y) {
  PlotSpec spec;
  spec.title = title;
  spec.x_label = x_label;
  spec.y_label = y_label;
  spec.log_y = log_y;
  spec.integer_x = true;
  return spec;
}

// One quantity of one variant across its seeds: x → the seeds' values.
using SeedValues = std::map<double, std::vector<double>>;

// The most values any x has: the seeds that reached it.
size_t seed_count(const SeedValues& by_x) {
  size_t n = 0;
  for (const auto& [x, ys] : by_x) n = std::max(n, ys.size());
  return n;
}

// The mean over seeds at every x that all the variant's seeds have.
PlotSeries mean_at_x_of_every_seed(const std::string& label, const SeedValues& by_x) {
  PlotSeries s{label, {}, {}};
  const size_t n = seed_count(by_x);
  for (const auto& [x, ys] : by_x) {
    if (ys.size() < n) continue;
    double sum = 0;
    for (double y : ys) sum += y;
    s.x.push_back(x);
    s.y.push_back(sum / static_cast<double>(n));
  }
  return s;
}

// Adds the variant's mean line to `spec`, and the seed count to the title once all lines are in
// (finish_title).
void add_mean(PlotSpec& spec, const std::string& label, const SeedValues& by_x,
              std::vector<size_t>& counts) {
  if (by_x.empty()) return;
  spec.series.push_back(mean_at_x_of_every_seed(label, by_x));
  counts.push_back(seed_count(by_x));
}

// " (mean over 3 seeds)", or per line " (2 seeds)" where the counts differ.
void finish_title(PlotSpec& spec, const std::vector<size_t>& counts) {
  if (counts.empty()) return;
  const size_t most = *std::max_element(counts.begin(), counts.end());
  spec.title += most == 1 ? " (1 seed)" : fmt::format(" (mean over {} seeds)", most);
  for (size_t i = 0; i < spec.series.size() && i < counts.size(); ++i) {
    if (counts[i] != most) spec.series[i].label += fmt::format(" ({} seeds)", counts[i]);
  }
}

// The block size the additive schemes' block sums use, so that they line up with the study's
// block_attnres: its block size (the first such variant), 1 with attnres only, else 0 (the
// model's block_size).
int study_block_size(const Experiment& e) {
  for (const Variant& v : e.variants) {
    if (v.model.scheme == Scheme::block_attnres) return v.model.block_size;
  }
  for (const Variant& v : e.variants) {
    if (v.model.scheme == Scheme::attnres) return 1;
  }
  return 0;
}

}  // namespace

void ensure_depth_probe(const Experiment& e, const Variant& v, uint64_t seed, const fs::path& dir) {
  // Runs probed before block sums existed have no blocks file: probed again.
  if (fs::exists(dir / "probe_depth.csv") && fs::exists(dir / "probe_depth_blocks.csv")) return;
  std::fprintf(stderr, "depth probe: %s seed %llu\n", v.label.c_str(),
               static_cast<unsigned long long>(seed));
  probe_depth_of_run(e, v, dir, study_block_size(e));
}

std::string depth_report(const Experiment& e, const fs::path& out) {
  if (!e.probe_depth) return "";
  std::string positions_csv =
      "variant,seed,position,layer,kind,hidden_rms,branch_rms,grad_norm,"
      "cosine,erank\n";
  std::string layers_csv = "variant,seed,layer,grad_norm,param_norm\n";
  std::string blocks_csv = "variant,seed,block,first_sublayer,last_sublayer,block_size,block_rms\n";
  PlotSpec blocks = depth_plot("RMS of each block's output (sum of its sublayers' outputs)",
                               "block", "RMS of the block sum", true);
  PlotSpec hidden = depth_plot("hidden-state RMS against depth", "stream position (sublayer)",
                               "RMS of the residual stream", true);
  PlotSpec grads =
      depth_plot("gradient norm of each layer's parameters", "layer", "gradient norm", true);
  PlotSpec cosine = depth_plot("mean pairwise cosine of tokens against depth",
                               "stream position (sublayer)", "mean cosine", false);
  std::string table = fmt::format(
      "\ndepth probe ({} validation sequences; first seed of each scheme)\n"
      "{:<22} {:>10} {:>10} {:>10} {:>11} {:>11} {:>8} {:>8}\n",
      e.probe_batch, "scheme", "rms in", "rms mid", "rms out", "grad first", "grad last", "cos out",
      "erank");
  std::string md = fmt::format(
      "\n**depth probe** ({} validation sequences; first seed of each scheme)\n\n"
      "| scheme | rms in | rms mid | rms out | grad first | grad last | cos out | erank |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- |\n",
      e.probe_batch);
  std::vector<size_t> blocks_n, hidden_n, grads_n, cosine_n;  // seeds per line
  for (const Variant& v : e.variants) {
    bool first_seed = true;
    SeedValues b_by, h_by, c_by, g_by;  // x → the seeds' values
    for (uint64_t seed : e.seeds) {
      const fs::path dir = run_directory(out, v, seed);
      if (read_run_status(dir) != RunStatus::finished) continue;
      ensure_depth_probe(e, v, seed, dir);
      for (const auto& row : read_csv(dir / "probe_depth_blocks.csv")) {
        blocks_csv +=
            fmt::format("{},{},{},{},{},{},{}\n", csv_field(v.label), seed, row.at("block"),
                        row.at("first_sublayer"), row.at("last_sublayer"), row.at("block_size"),
                        row.at("block_rms"));
        b_by[number(row, "block")].push_back(number(row, "block_rms"));
      }
      const auto pos = read_csv(dir / "probe_depth.csv");
      const auto params = read_csv(dir / "probe_depth_params.csv");
      PlotSeries h{v.label, {}, {}}, c{v.label, {}, {}}, g{v.label, {}, {}};
      for (const auto& row : pos) {
        positions_csv += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", csv_field(v.label), seed,
                                     row.at("position"), row.at("layer"), row.at("kind"),
                                     row.at("hidden_rms"), row.at("branch_rms"),
                                     row.at("grad_norm"), row.at("cosine"), row.at("erank"));
        h.x.push_back(number(row, "position"));
        h.y.push_back(number(row, "hidden_rms"));
        c.x.push_back(number(row, "position"));
        c.y.push_back(number(row, "cosine"));
        h_by[h.x.back()].push_back(h.y.back());
        c_by[c.x.back()].push_back(c.y.back());
      }
      for (const auto& row : params) {
        // Per-layer group rows are named "group:layer l" (depth_params_csv); tensor rows have
        // dotted names.
        if (row.count("name") == 0 || row.at("name").rfind("group:layer ", 0) != 0) continue;
        layers_csv += fmt::format("{},{},{},{},{}\n", csv_field(v.label), seed, row.at("layer"),
                                  row.at("grad_norm"), row.at("param_norm"));
        g.x.push_back(number(row, "layer"));
        g.y.push_back(number(row, "grad_norm"));
        g_by[g.x.back()].push_back(g.y.back());
      }
      if (!first_seed || pos.empty() || g.y.empty()) continue;
      first_seed = false;
      // One row per scheme, for stdout and for summary.md: RMS at the input, middle and output
      // of the stack, first and last layers' gradient norms, output cosine and effective rank.
      const double rms_in = h.y.front(), rms_mid = h.y[h.y.size() / 2], rms_out = h.y.back();
      const double grad_first = g.y.front(), grad_last = g.y.back(), cos_out = c.y.back();
      const double erank = number(pos.back(), "erank");
      table += fmt::format(
          "{:<22} {:>10.4g} {:>10.4g} {:>10.4g} {:>11.4g} {:>11.4g} {:>8.3f} {:>8.2f}\n", v.label,
          rms_in, rms_mid, rms_out, grad_first, grad_last, cos_out, erank);
      md += fmt::format("| {} | {:.4g} | {:.4g} | {:.4g} | {:.4g} | {:.4g} | {:.3f} | {:.2f} |\n",
                        markdown_cell(v.label), rms_in, rms_mid, rms_out, grad_first, grad_last,
                        cos_out, erank);
    }
    // The plots show every seed: the mean over the seeds of each variant.
    add_mean(hidden, v.label, h_by, hidden_n);
    add_mean(cosine, v.label, c_by, cosine_n);
    add_mean(grads, v.label, g_by, grads_n);
    add_mean(blocks, v.label, b_by, blocks_n);
  }
  finish_title(hidden, hidden_n);
  finish_title(cosine, cosine_n);
  finish_title(grads, grads_n);
  finish_title(blocks, blocks_n);
  write_file_atomic(out / "depth.csv", positions_csv);
  write_file_atomic(out / "depth_layers.csv", layers_csv);
  write_line_plot(out / "depth_hidden_rms.png", hidden);
  write_line_plot(out / "depth_grad_norm.png", grads);
  write_line_plot(out / "depth_cosine.png", cosine);
  write_file_atomic(out / "depth_blocks.csv", blocks_csv);
  write_line_plot(out / "depth_block_rms.png", blocks);
  // summary.md was just written by collect_results; the depth table goes after its tables.
  md += report::markdown_figures(out, {{"depth_hidden_rms.png", "hidden-state RMS against depth"},
                                       {"depth_grad_norm.png", "gradient norm per layer"},
                                       {"depth_cosine.png", "mean token cosine against depth"},
                                       {"depth_block_rms.png", "RMS of each block's output"}});
  report::append_summary(out, md);
  return table;
}

}  // namespace normlab
