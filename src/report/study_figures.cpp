// The figures and tables of train studies (report_sections.hpp): every metric against length,
// the summary tables and the loss curves, for one study or several side by side.
//
// Figures are faceted by sweep point (one figure per point, schemes as lines), hold at most
// kMaxSeriesPerPanel schemes each, colour a scheme alike in every figure of the page
// (SchemeColours), share one y range per metric across all of them, and say on the y axis which
// way the metric is better.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "normlab/tasks/metrics.hpp"
#include "report/report_data.hpp"
#include "report/report_sections.hpp"

namespace normlab::report {
namespace {

constexpr size_t kMaxSeriesPerPanel = 8;
// Bands need this many seeds: with two, t_{0.975, 1} = 12.7 stretches the 95% interval over
// most of the axis and the bands of a few schemes cover each other.
constexpr size_t kMinSeedsForBand = 3;

bool is_chance_row(const std::string& m, const std::vector<std::string>& metrics) {
  return m.size() > 7 && m.compare(m.size() - 7, 7, "_chance") == 0 &&
         std::find(metrics.begin(), metrics.end(), m.substr(0, m.size() - 7)) != metrics.end();
}

// The facets of a study: its sweep points in order of first appearance ("" without [sweep]),
// each with its variants' labels in experiment order.
std::vector<std::pair<std::string, std::vector<std::string>>> facets(const nlohmann::json& e) {
  const std::map<std::string, VariantParts> parts = variant_parts(e);
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& v : e.value("variants", nlohmann::json::array())) {
    const std::string label = v.value("label", "");
    const std::string& point = parts.at(label).point;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& f) { return f.first == point; });
    if (it == out.end()) it = out.insert(out.end(), {point, {}});
    it->second.push_back(label);
  }
  return out;
}

// Chunks of at most kMaxSeriesPerPanel labels.
std::vector<std::vector<std::string>> panels(const std::vector<std::string>& labels) {
  std::vector<std::vector<std::string>> out;
  for (size_t i = 0; i < labels.size(); i += kMaxSeriesPerPanel) {
    out.emplace_back(labels.begin() + static_cast<std::ptrdiff_t>(i),
                     labels.begin() + static_cast<std::ptrdiff_t>(
                                          std::min(labels.size(), i + kMaxSeriesPerPanel)));
  }
  return out;
}

// "(pre weights, lr=0.003, schemes 9–12 of 12)" for a figure's title.
std::string figure_qualifier(const std::string& first, const std::string& point, size_t panel,
                             size_t panel_count, size_t scheme_count) {
  std::string q = first;
  if (!point.empty()) q += (q.empty() ? "" : ", ") + point;
  if (panel_count > 1) {
    const size_t lo = panel * kMaxSeriesPerPanel + 1;
    const size_t hi = std::min(scheme_count, (panel + 1) * kMaxSeriesPerPanel);
    q += fmt::format("{}schemes {}–{} of {}", q.empty() ? "" : ", ", lo, hi, scheme_count);
  }
  return q.empty() ? "" : " (" + q + ")";
}

std::string axis_label(const std::string& metric) {
  const std::string better = better_direction(metric);
  return better.empty() ? metric : fmt::format("{} ({})", metric, better);
}

// The y range a metric's figures share over every study: the means and the chance level,
// widened by the bands by at most half the means' span per side, as a single figure's range is
// (svg_plot.hpp); and whether the lengths span a decade (then a log length axis).
struct SharedAxes {
  double y_lo = std::numeric_limits<double>::infinity();
  double y_hi = -std::numeric_limits<double>::infinity();
  bool log_lengths = false;
};

SharedAxes shared_axes(const std::vector<const StudyTables*>& studies, const std::string& m) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  SharedAxes a;
  double n_lo = kInf, n_hi = -kInf, b_lo = kInf, b_hi = -kInf;
  const std::string chance = m + "_chance";
  for (const StudyTables* s : studies) {
    if (!s->summary) continue;
    const CsvTable& t = *s->summary;
    const size_t metric = t.column("metric"), mean = t.column("mean"), length = t.column("length"),
                 low = t.column("ci_low"), high = t.column("ci_high");
    for (const auto& row : t.rows) {
      if (row[metric] != m && row[metric] != chance) continue;
      const double mu = to_number(row[mean]), n = to_number(row[length]);
      if (std::isfinite(mu)) a.y_lo = std::min(a.y_lo, mu), a.y_hi = std::max(a.y_hi, mu);
      if (std::isfinite(n)) n_lo = std::min(n_lo, n), n_hi = std::max(n_hi, n);
      const double lo = to_number(row[low]), hi = to_number(row[high]);
      if (std::isfinite(lo)) b_lo = std::min(b_lo, lo);
      if (std::isfinite(hi)) b_hi = std::max(b_hi, hi);
    }
  }
  if (a.y_lo <= a.y_hi) {
    const double cap = 0.5 * (a.y_hi - a.y_lo);
    if (b_lo < a.y_lo) a.y_lo = std::max(b_lo, a.y_lo - cap);
    if (b_hi > a.y_hi) a.y_hi = std::min(b_hi, a.y_hi + cap);
  }
  a.log_lengths = n_lo > 0 && n_hi >= 10 * n_lo;
  return a;
}

// The metric's figures of one study: per weights, per sweep point, per panel of schemes.
void study_metric_figures(Page& page, const StudyTables& study, const std::string& m,
                          const SharedAxes& axes, const SchemeColours& colours,
                          const std::string& study_prefix) {
  const CsvTable& t = *study.summary;
  const size_t variant = t.column("variant"), weights = t.column("weights"),
               metric = t.column("metric"), length = t.column("length"), mean = t.column("mean"),
               seeds = t.column("seeds"), low = t.column("ci_low"), high = t.column("ci_high");
  const auto [min_len, max_len] = training_lengths(study.experiment);
  const std::string chance = m + "_chance";
  for (const std::string& w : distinct(t, weights)) {
    svg::Figure frame;
    frame.title = fmt::format("{}{} against length", study_prefix, m);
    frame.x = {"task length N", axes.log_lengths, false};
    frame.y = {axis_label(m), false, false};
    if (axes.y_lo <= axes.y_hi) frame.y.include = {axes.y_lo, axes.y_hi};
    if (std::isfinite(min_len) && std::isfinite(max_len)) {
      frame.shade = svg::Shade{min_len, max_len, "training lengths"};
    }
    std::vector<svg::Series> lines;
    size_t most_seeds = 0;
    for (const std::string& v : distinct(t, variant)) {
      svg::Series s;
      s.label = v;
      for (const auto& row : t.rows) {
        if (row[variant] != v || row[weights] != w || row[metric] != m) continue;
        s.x.push_back(to_number(row[length]));
        s.y.push_back(to_number(row[mean]));
        s.lower.push_back(to_number(row[low]));
        s.upper.push_back(to_number(row[high]));
        most_seeds =
            std::max(most_seeds, static_cast<size_t>(std::max(0.0, to_number(row[seeds]))));
      }
      if (!s.x.empty()) lines.push_back(std::move(s));
    }
    if (lines.empty()) continue;
    // The chance level: the same samples for every scheme, so the first scheme's rows.
    svg::Series floor;
    floor.label = "chance (uniform predictor)";
    floor.reference = true;
    for (const auto& row : t.rows) {
      if (row[weights] != w || row[metric] != chance || row[variant] != lines.front().label) {
        continue;
      }
      floor.x.push_back(to_number(row[length]));
      floor.y.push_back(to_number(row[mean]));
    }
    const bool with_floor = !floor.x.empty();
    variant_figures(page, {&study, &colours}, frame, w + " weights", lines, most_seeds,
                    {fmt::format("{} with {} weights", m, w),
                     fmt::format("; shaded: training lengths{}",
                                 with_floor ? "; grey dots: the uniform predictor (chance)" : "")},
                    [&](const std::vector<svg::Series>&) {
                      return with_floor ? std::vector<svg::Series>{floor}
                                        : std::vector<svg::Series>{};
                    });
  }
}

}  // namespace

void variant_figures(Page& page, const FigureRules& rules, const svg::Figure& frame,
                     const std::string& qualifier, const std::vector<svg::Series>& lines,
                     size_t seeds, const Caption& caption, const References& references) {
  const auto line_of = [&](const std::string& label) {
    return std::find_if(lines.begin(), lines.end(),
                        [&](const svg::Series& l) { return l.label == label; });
  };
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  std::map<std::string, VariantParts> parts;
  if (rules.study != nullptr) {
    groups = facets(rules.study->experiment);
    parts = variant_parts(rules.study->experiment);
  }
  // Lines of variants the experiment does not list (an older folder) go last, as they are.
  std::vector<std::string> others;
  for (const svg::Series& l : lines) {
    if (parts.count(l.label) == 0) others.push_back(l.label);
  }
  if (!others.empty()) groups.emplace_back("", others);
  const bool bands = seeds >= kMinSeedsForBand;
  // The panels share the y range of every line's means (positive ones on a log axis).
  std::vector<double> include = frame.y.include;
  for (const svg::Series& l : lines) {
    for (double y : l.y) {
      if (std::isfinite(y) && (!frame.y.log || y > 0)) include.push_back(y);
    }
  }
  if (!include.empty()) {
    const auto [lo, hi] = std::minmax_element(include.begin(), include.end());
    include = {*lo, *hi};
  }
  for (const auto& [point, labels] : groups) {
    std::vector<std::string> present;
    for (const std::string& v : labels) {
      if (line_of(v) != lines.end()) present.push_back(v);
    }
    const std::vector<std::vector<std::string>> chunks = panels(present);
    for (size_t c = 0; c < chunks.size(); ++c) {
      svg::Figure f = frame;
      f.y.include = include;
      // "TITLE (a)" and qualifier " (b)" make "TITLE (a, b)".
      const std::string q = figure_qualifier(qualifier, point, c, chunks.size(), present.size());
      if (!q.empty() && !f.title.empty() && f.title.back() == ')') {
        f.title = f.title.substr(0, f.title.size() - 1) + ", " + q.substr(2);
      } else {
        f.title += q;
      }
      for (const std::string& v : chunks[c]) {
        svg::Series line = *line_of(v);
        if (rules.colours != nullptr && rules.colours->of(v) >= 0)
          line.color = rules.colours->of(v);
        if (parts.count(v) > 0) line.label = parts.at(v).base;
        if (!bands) line.lower.clear(), line.upper.clear();
        f.series.push_back(std::move(line));
      }
      if (references) {
        for (svg::Series& r : references(f.series)) f.series.push_back(std::move(r));
      }
      page.figure(f, fmt::format("{}{}: {} per scheme{}{}.", caption.head,
                                 point.empty() ? "" : " at " + point, seeds_phrase(seeds),
                                 bands       ? ", 95% band across seeds"
                                 : seeds > 1 ? " (no band below 3 seeds)"
                                             : "",
                                 caption.tail));
    }
  }
}

void running_note(Page& page, const StudyTables& study) {
  if (!study.running) return;
  page.paragraph(fmt::format(
      "{} has not finished (it is running, or was stopped): {} of {} runs have ended. Its "
      "figures and tables show the runs that ended, from results.sqlite, and every run's loss "
      "curve so far, from its metrics.jsonl; `normlab report` again shows more.",
      study.out.string(), study.runs_ended, study.runs_total));
}

void metrics_section(Page& page, const std::vector<const StudyTables*>& studies,
                     const SchemeColours& colours) {
  std::vector<std::string> metrics;
  for (const StudyTables* s : studies) {
    if (!s->summary) continue;
    for (const std::string& m : distinct(*s->summary, s->summary->column("metric"))) {
      if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
    }
  }
  if (metrics.empty()) return;
  page.heading(2, "Metrics against length");
  const auto [min_len, max_len] = training_lengths(studies.front()->experiment);
  const std::string trained = studies.size() == 1 && std::isfinite(min_len)
                                  ? fmt::format(" ({:g} .. {:g})", min_len, max_len)
                                  : std::string();
  page.paragraph(fmt::format(
      "Each metric at every evaluation length: one figure per weights (raw, EMA, BEMA) and sweep "
      "point, one line per scheme (at most 8 to a figure), the mean over seeds with its 95% "
      "Student-t interval across seeds as the band (3 seeds or more), cut to the metric's range. "
      "A scheme has one colour in every figure; the figures of a metric share their y range, and "
      "the y axis says which way is better. The length axis is logarithmic when the lengths span "
      "a decade or more; the shaded interval is the training lengths{}. From summary.csv.",
      trained));
  for (const std::string& m : metrics) {
    // A chance row ("tvd_chance": the uniform predictor on the same samples, the floor of design
    // rule D1) is drawn in its metric's figures, not as a metric of its own.
    if (is_chance_row(m, metrics)) continue;
    page.heading(3, m);
    page.begin_figures();
    const SharedAxes axes = shared_axes(studies, m);
    for (const StudyTables* s : studies) {
      if (!s->summary) continue;
      study_metric_figures(page, *s, m, axes, colours,
                           studies.size() > 1 ? s->name + ": " : std::string());
    }
    page.end_figures();
  }
}

void summary_tables_section(Page& page, const StudyTables& study, bool named) {
  if (!study.summary || study.summary->rows.empty()) return;
  const CsvTable& t = *study.summary;
  const size_t variant = t.column("variant"), weights = t.column("weights"),
               metric = t.column("metric"), length = t.column("length"), mean = t.column("mean"),
               low = t.column("ci_low"), high = t.column("ci_high");
  const double max_len = training_lengths(study.experiment).second;
  std::vector<double> lengths;
  for (const auto& row : t.rows) {
    const double n = to_number(row[length]);
    if (std::find(lengths.begin(), lengths.end(), n) == lengths.end()) lengths.push_back(n);
  }
  std::sort(lengths.begin(), lengths.end());
  page.heading(2, fmt::format("Summary tables{}{}", named ? ": " + study.name : "",
                              study.running ? " (runs ended so far)" : ""));
  page.paragraph(
      "Mean [low, high] of the 95% Student-t interval across seeds, per scheme, weights and "
      "length (summary.csv), the interval cut to the metric's range (accuracy, TVD, ROC AUC in "
      "[0, 1], losses >= 0). * marks lengths beyond the longest training length "
      "(extrapolation).");
  for (const std::string& m : distinct(t, metric)) {
    page.heading(3, "Table: " + m);
    std::vector<std::string> header = {"scheme", "weights"};
    for (double n : lengths) {
      header.push_back(
          fmt::format("N={:g}{}", n, std::isfinite(max_len) && n > max_len ? "*" : ""));
    }
    std::vector<std::vector<std::string>> rows;
    for (const std::string& v : distinct(t, variant)) {
      for (const std::string& w : distinct(t, weights)) {
        std::vector<std::string> cells = {v, w};
        bool any = false;
        for (double n : lengths) {
          std::string c = "-";
          for (const auto& row : t.rows) {
            if (row[variant] != v || row[weights] != w || row[metric] != m ||
                to_number(row[length]) != n) {
              continue;
            }
            c = interval_cell(to_number(row[mean]), to_number(row[low]), to_number(row[high]));
            any = true;
          }
          cells.push_back(c);
        }
        if (any) rows.push_back(std::move(cells));
      }
    }
    page.table(header, rows, false);
  }
}

void curves_section(Page& page, const std::vector<const StudyTables*>& studies,
                    const SchemeColours& colours) {
  bool any = false;
  for (const StudyTables* s : studies) any = any || (s->curves && !s->curves->rows.empty());
  if (!any) return;
  page.heading(2, "Loss curves");
  page.paragraph(
      "Training loss (the logged batch losses) and validation loss (with [train] eval_every) "
      "against the step, one figure per sweep point, one line per scheme: the mean over seeds at "
      "the steps every seed logged, with its 95% Student-t interval across seeds as the band (3 "
      "seeds or more). Log loss axis: the first steps' losses are far above the rest; each loss's "
      "figures share their y range. From "
      "curves.csv, or from each run's metrics.jsonl while the study runs.");
  // Every figure first, so that each loss's figures share one y range.
  struct Made {
    svg::Figure figure;
    std::string caption;
  };
  std::vector<Made> made;
  for (const StudyTables* study : studies) {
    if (!study->curves || study->curves->rows.empty()) continue;
    const CsvTable& t = *study->curves;
    const size_t variant = t.column("variant"), step = t.column("step"),
                 train = t.column("train_loss"), val = t.column("val_loss");
    const std::map<std::string, VariantParts> parts = variant_parts(study->experiment);
    const std::string prefix = studies.size() > 1 ? study->name + ": " : "";
    for (const auto& [point, labels] : facets(study->experiment)) {
      const std::vector<std::vector<std::string>> chunks = panels(labels);
      for (size_t c = 0; c < chunks.size(); ++c) {
        const std::vector<std::string>& chunk = chunks[c];
        SeedAverages train_loss, val_loss;
        for (const auto& row : t.rows) {
          if (std::find(chunk.begin(), chunk.end(), row[variant]) == chunk.end()) continue;
          const double x = to_number(row[step]);
          train_loss.add(row[variant], x, to_number(row[train]));
          val_loss.add(row[variant], x, to_number(row[val]));
        }
        for (const auto& [what, data] :
             {std::pair<std::string, const SeedAverages*>{"training loss", &train_loss},
              {"validation loss", &val_loss}}) {
          if (data->empty()) continue;
          svg::Figure f;
          f.title = fmt::format("{}{} against step{}", prefix, what,
                                figure_qualifier("", point, c, chunks.size(), labels.size()));
          f.x = {"step", false, true};
          f.y = {what + " (nats, lower is better)", true, false};
          const bool bands = data->max_seeds() >= kMinSeedsForBand;
          for (svg::Series s : data->series()) {
            s.color = colours.of(s.label);
            s.label = parts.count(s.label) > 0 ? parts.at(s.label).base : s.label;
            if (!bands) s.lower.clear(), s.upper.clear();
            f.series.push_back(std::move(s));
          }
          made.push_back({std::move(f), fmt::format("{}{}: {} per scheme{}.", what,
                                                    point.empty() ? "" : " at " + point,
                                                    seeds_phrase(data->max_seeds()),
                                                    bands ? ", 95% band across seeds" : "")});
        }
      }
    }
  }
  std::map<std::string, std::pair<double, double>> range;  // y label → (lowest, highest mean)
  for (const Made& m : made) {
    auto& [lo, hi] = range.try_emplace(m.figure.y.label, INFINITY, -INFINITY).first->second;
    for (const svg::Series& series : m.figure.series) {
      for (double y : series.y) {
        if (std::isfinite(y) && y > 0) lo = std::min(lo, y), hi = std::max(hi, y);
      }
    }
  }
  page.begin_figures();
  for (Made& m : made) {
    const auto [lo, hi] = range.at(m.figure.y.label);
    if (lo <= hi) m.figure.y.include = {lo, hi};
    page.figure(m.figure, m.caption);
  }
  page.end_figures();
}

}  // namespace normlab::report
