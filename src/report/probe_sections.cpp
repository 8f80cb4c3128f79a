// The probes' sections of a kind = "train" folder (report_sections.hpp): the variance probe
// (features.csv, features_fit.csv), the depth probe (depth.csv, depth_layers.csv,
// depth_blocks.csv), the dilution probe (dilution.csv, dilution_fit.csv) and the particle
// bridge (bridge.csv). Every line is the mean over seeds with a 95% band across seeds (from 3
// seeds where the figure follows the page's rules, variant_figures).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "report/report_data.hpp"
#include "report/report_sections.hpp"

namespace normlab::report {
namespace fs = std::filesystem;
namespace {

using Row = std::vector<std::string>;

// Per row: the line's label, or "" to skip the row.
using LabelOf = std::function<std::string(const Row&)>;

SeedAverages averages(const CsvTable& t, const LabelOf& label, const std::string& x,
                      const std::string& y, const std::function<double(double)>& f = {}) {
  const size_t cx = t.column(x), cy = t.column(y);
  SeedAverages a;
  for (const Row& row : t.rows) {
    const std::string l = label(row);
    if (l.empty()) continue;
    const double v = to_number(row[cy]);
    a.add(l, to_number(row[cx]), f ? f(v) : v);
  }
  return a;
}

LabelOf by_column(const CsvTable& t, const std::string& column) {
  const size_t c = t.column(column);
  return [c](const Row& row) { return row[c]; };
}

// `caption`: a sentence without its full stop; the seeds and bands follow it.
void averages_figure(Page& page, const FigureRules& rules, const SeedAverages& a,
                     const std::string& title, const svg::Axis& x, const svg::Axis& y,
                     const std::string& caption) {
  if (a.empty()) return;
  svg::Figure f;
  f.title = fmt::format("{} ({})", title, seeds_phrase(a.max_seeds()));
  f.x = x;
  f.y = y;
  variant_figures(page, rules, f, "", a.series(), a.max_seeds(), {caption, ""});
}

void features_section(Page& page, const fs::path& out, const FigureRules& rules) {
  const std::optional<CsvTable> t = read_table_if(out / "features.csv");
  if (!t || t->rows.empty()) return;
  const std::optional<CsvTable> fit = read_table_if(out / "features_fit.csv");
  const size_t layer = t->column("layer"), site = t->column("site"), variant = t->column("variant");
  page.heading(2, "Variance probe");
  page.paragraph(
      "Global standard deviation of each site's output (layer 0) against the task length N, "
      "log-log, per scheme: the mean over seeds with a 95% band across seeds. Dashed: the "
      "least-squares line with the mean over seeds of the fitted slope (features_fit.csv), "
      "drawn through the centre of the scheme's points; grey dots: N^−1/2 through the first "
      "scheme's first point, the vanishing-variance rate. From features.csv.");
  std::vector<std::string> sites;
  for (const Row& row : t->rows) {
    if (row[layer] == "0" && std::find(sites.begin(), sites.end(), row[site]) == sites.end()) {
      sites.push_back(row[site]);
    }
  }
  page.begin_figures();
  for (const std::string& s : sites) {
    const SeedAverages a = averages(
        *t, [&](const Row& r) { return r[layer] == "0" && r[site] == s ? r[variant] : ""; },
        "length", "global_std");
    svg::Figure f;
    f.title = fmt::format("global std of {} (layer 0) against N", s);
    f.x = {"task length N", true, false};
    f.y = {"global std", true, false};
    f.series = a.series();
    const size_t lines = f.series.size();
    for (size_t i = 0; i < lines; ++i) {
      svg::Series& line = f.series[i];
      line.color = rules.colours != nullptr ? rules.colours->of(line.label) : static_cast<int>(i);
      if (!fit) continue;
      std::vector<double> slopes;
      for (const Row& r : fit->rows) {
        if (r[fit->column("variant")] == line.label && r[fit->column("layer")] == "0" &&
            r[fit->column("site")] == s) {
          slopes.push_back(to_number(r[fit->column("slope")]));
        }
      }
      const SeedInterval slope = interval_across_seeds("", slopes);
      double cx = 0, cy = 0, lo = INFINITY, hi = 0;
      size_t n = 0;
      for (size_t k = 0; k < line.x.size(); ++k) {
        if (!(line.x[k] > 0) || !(line.y[k] > 0)) continue;
        cx += std::log10(line.x[k]);
        cy += std::log10(line.y[k]);
        lo = std::min(lo, line.x[k]);
        hi = std::max(hi, line.x[k]);
        ++n;
      }
      if (n < 2 || !std::isfinite(slope.mean)) continue;
      cx /= static_cast<double>(n);
      cy /= static_cast<double>(n);
      svg::Series fitted;
      fitted.label = fmt::format("{} fit, slope {:.3f}", line.label, slope.mean);
      fitted.dashed = true;
      fitted.color = line.color;
      for (double x : {lo, hi}) {
        fitted.x.push_back(x);
        fitted.y.push_back(std::pow(10.0, cy + slope.mean * (std::log10(x) - cx)));
      }
      f.series.push_back(fitted);
    }
    if (lines > 0 && !f.series[0].x.empty()) {
      const svg::Series& first = f.series[0];
      svg::Series ref;
      ref.label = "N^−1/2 reference";
      ref.reference = true;
      for (double x : first.x) {
        ref.x.push_back(x);
        ref.y.push_back(first.y[0] * std::sqrt(first.x[0] / x));
      }
      f.series.push_back(ref);
    }
    page.figure(f, fmt::format("{}: global std against N ({}), fitted slopes and N^−1/2.", s,
                               seeds_phrase(a.max_seeds())));
  }
  page.end_figures();
  if (fit && !fit->rows.empty()) {
    page.heading(3, "Fitted slopes");
    page.paragraph(
        "Slope of ln global std against ln N per scheme, seed, layer and site, with "
        "its 95% interval, and the mean drift (features_fit.csv).");
    std::vector<std::vector<std::string>> rows;
    for (const Row& r : fit->rows) {
      rows.push_back(
          {r[fit->column("variant")], r[fit->column("seed")], r[fit->column("layer")],
           r[fit->column("site")], r[fit->column("slope")],
           fmt::format("[{}, {}]", r[fit->column("slope_low")], r[fit->column("slope_high")]),
           r[fit->column("mean_drift")]});
    }
    page.table({"scheme", "seed", "layer", "site", "slope", "95% interval", "mean drift"}, rows);
  }
}

void depth_section(Page& page, const fs::path& out, const FigureRules& rules) {
  const std::optional<CsvTable> pos = read_table_if(out / "depth.csv");
  const std::optional<CsvTable> layers = read_table_if(out / "depth_layers.csv");
  const std::optional<CsvTable> blocks = read_table_if(out / "depth_blocks.csv");
  if ((!pos || pos->rows.empty()) && (!layers || layers->rows.empty())) return;
  page.heading(2, "Depth probe");
  page.paragraph(
      "The depth probe on each run's final raw weights (docs/probes.md): per scheme the mean "
      "over seeds, with a 95% band across seeds. Stream position = sublayer index. From "
      "depth.csv, depth_layers.csv and depth_blocks.csv.");
  const svg::Axis position{"stream position (sublayer)", false, true};
  page.begin_figures();
  if (pos && !pos->rows.empty()) {
    const LabelOf v = by_column(*pos, "variant");
    averages_figure(page, rules, averages(*pos, v, "position", "hidden_rms"),
                    "hidden-state RMS against depth", position,
                    {"RMS of the residual stream", true, false},
                    "RMS of the residual stream after each sublayer (log scale)");
    averages_figure(page, rules, averages(*pos, v, "position", "cosine"),
                    "mean pairwise token cosine against depth", position,
                    {"mean cosine", false, false},
                    "Mean pairwise cosine of the tokens' hidden states after each sublayer");
    averages_figure(page, rules, averages(*pos, v, "position", "erank"),
                    "effective rank against depth", position, {"effective rank", false, false},
                    "Effective rank of the hidden states after each sublayer");
  }
  if (layers && !layers->rows.empty()) {
    averages_figure(
        page, rules, averages(*layers, by_column(*layers, "variant"), "layer", "grad_norm"),
        "gradient norm per layer", {"layer", false, true}, {"gradient norm", true, false},
        "Norm of the gradient over each layer's parameters (log scale)");
  }
  if (blocks && !blocks->rows.empty()) {
    averages_figure(
        page, rules, averages(*blocks, by_column(*blocks, "variant"), "block", "block_rms"),
        "RMS of each block's output", {"block", false, true}, {"RMS of the block sum", true, false},
        "RMS of each block's output, the sum of its sublayers' outputs (log scale)");
  }
  page.end_figures();
}

void dilution_section(Page& page, const fs::path& out, const FigureRules& rules) {
  const std::optional<CsvTable> t = read_table_if(out / "dilution.csv");
  if (!t || t->rows.empty()) return;
  const size_t variant = t->column("variant"), site = t->column("site");
  std::vector<std::string> sites;  // in the table's order
  for (const Row& r : t->rows) {
    if (std::find(sites.begin(), sites.end(), r[site]) == sites.end()) sites.push_back(r[site]);
  }
  page.heading(2, "Dilution probe");
  page.paragraph(
      "|mean logit gap| (absent − present) at the query against the input size s, log-log, one "
      "figure per site and sweep point and one line per scheme (at most 8 to a figure, its "
      "colour the same in every figure): the mean over seeds with a 95% band across seeds from 3 "
      "seeds; grey dots: 1/s through the figure's first scheme's first point, a reference. From "
      "dilution.csv.");
  page.begin_figures();
  for (const std::string& where : sites) {
    const SeedAverages a = averages(
        *t, [&](const Row& r) { return r[site] == where ? r[variant] : std::string(); }, "s", "gap",
        [](double g) { return std::abs(g); });
    if (a.empty()) continue;
    svg::Figure f;
    f.title = fmt::format("logit gap against s at {} ({})", where, seeds_phrase(a.max_seeds()));
    f.x = {"input size s", true, false};
    f.y = {"|mean logit gap|", true, false};
    // 1/s through the panel's first line's first point.
    const References one_over_s = [](const std::vector<svg::Series>& lines) {
      std::vector<svg::Series> refs;
      if (lines.empty() || lines[0].x.empty()) return refs;
      svg::Series ref;
      ref.label = "1/s reference";
      ref.reference = true;
      for (double x : lines[0].x) {
        ref.x.push_back(x);
        ref.y.push_back(lines[0].y[0] * lines[0].x[0] / x);
      }
      refs.push_back(std::move(ref));
      return refs;
    };
    variant_figures(
        page, rules, f, "", a.series(), a.max_seeds(),
        {fmt::format("Logit gap against the input size s at {}", where), ", with a 1/s reference"},
        one_over_s);
  }
  page.end_figures();
  if (const std::optional<CsvTable> fit = read_table_if(out / "dilution_fit.csv")) {
    std::vector<std::vector<std::string>> rows;
    for (const Row& r : fit->rows) {
      rows.push_back(
          {r[fit->column("variant")], r[fit->column("seed")], r[fit->column("site")],
           r[fit->column("slope")],
           fmt::format("[{}, {}]", r[fit->column("slope_low")], r[fit->column("slope_high")])});
    }
    page.table({"scheme", "seed", "site", "slope of ln|gap| against ln s", "95% interval"}, rows);
  }
}

void bridge_section(Page& page, const fs::path& out, const FigureRules& rules) {
  const std::optional<CsvTable> t = read_table_if(out / "bridge.csv");
  if (!t || t->rows.empty()) return;
  const LabelOf v = by_column(*t, "variant");
  const SeedAverages measured = averages(*t, v, "layer", "measured_cos");
  const SeedAverages predicted = averages(*t, v, "layer", "predicted_cos");
  page.heading(2, "Particle bridge");
  page.paragraph(
      "The particle ODE run on each model's own attention (docs/particles.md): the predicted "
      "mean token cosine per layer (dashed) against the one the depth probe measures (solid), "
      "per scheme: the mean over seeds with a 95% band across seeds. From bridge.csv.");
  svg::Figure f;
  f.title =
      fmt::format("predicted and measured token cosine ({})", seeds_phrase(measured.max_seeds()));
  f.x = {"layer", false, true};
  f.y = {"mean pairwise cosine", false, false};
  std::vector<svg::Series> m = measured.series(), p = predicted.series();
  for (size_t i = 0; i < m.size(); ++i) {
    m[i].color = rules.colours != nullptr ? rules.colours->of(m[i].label) : static_cast<int>(i);
    f.series.push_back(m[i]);
    for (svg::Series& s : p) {
      if (s.label != m[i].label) continue;
      s.label += " ODE";
      s.dashed = true;
      s.color = m[i].color;
      f.series.push_back(s);
    }
  }
  page.figure(f, "Predicted (ODE, dashed) and measured (solid) mean token cosine per layer.");
}

}  // namespace

void probe_sections(Page& page, const fs::path& out, const FigureRules& rules) {
  features_section(page, out, rules);
  depth_section(page, out, rules);
  dilution_section(page, out, rules);
  bridge_section(page, out, rules);
}

}  // namespace normlab::report
