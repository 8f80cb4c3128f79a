// The sections of a kind = "train" results folder: the experiment, its provenance, the metrics
// against length, the summary tables and the loss curves (report_sections.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/store/results_store.hpp"
#include "normlab/tasks/metrics.hpp"
#include "report/report_data.hpp"
#include "report/report_sections.hpp"

namespace normlab::report {
namespace fs = std::filesystem;
namespace {

std::string text_of(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_null()) return "";
  return j.dump();
}

std::string joined(const nlohmann::json& list) {
  std::string s;
  if (!list.is_array()) return text_of(list);
  for (const auto& item : list) s += (s.empty() ? "" : ", ") + text_of(item);
  return s;
}

// Training lengths [min_len, max_len] from experiment.json; NaN when absent.
std::pair<double, double> training_lengths(const nlohmann::json& e) {
  const nlohmann::json train = e.value("train", nlohmann::json::object());
  const auto get = [&](const char* key) {
    return train.contains(key) && train[key].is_number() ? train[key].get<double>() : NAN;
  };
  return {get("min_len"), get("max_len")};
}

// Distinct values of a column in order of first appearance.
std::vector<std::string> distinct(const CsvTable& t, size_t column) {
  std::vector<std::string> out;
  for (const auto& row : t.rows) {
    if (std::find(out.begin(), out.end(), row[column]) == out.end()) out.push_back(row[column]);
  }
  return out;
}

}  // namespace

void experiment_section(Page& page, const fs::path& out, const nlohmann::json& e) {
  page.heading(2, "Experiment");
  std::vector<std::vector<std::string>> rows;
  const auto add = [&](const std::string& key, const std::string& value) {
    if (!value.empty()) rows.push_back({key, value});
  };
  std::vector<std::string> labels;
  for (const auto& v : e.value("variants", nlohmann::json::array())) {
    labels.push_back(v.value("label", ""));
  }
  const nlohmann::json train = e.value("train", nlohmann::json::object());
  const nlohmann::json eval = e.value("eval", nlohmann::json::object());
  const auto [min_len, max_len] = training_lengths(e);
  add("name", text_of(e.value("name", nlohmann::json())));
  add("experiment file", text_of(e.value("file", nlohmann::json())));
  add("tier", text_of(e.value("tier", nlohmann::json())));
  add("--set", joined(e.value("sets", nlohmann::json::array())));
  add("task", e.contains("task") ? e["task"].dump() : "");
  add("schemes (variants)", fmt::format("{}", fmt::join(labels, ", ")));
  add("seeds", joined(e.value("seeds", nlohmann::json::array())));
  add("training steps", text_of(train.value("steps", nlohmann::json())));
  if (std::isfinite(min_len))
    add("training lengths", fmt::format("{:g} .. {:g}", min_len, max_len));
  add("schedule", text_of(train.value("schedule", nlohmann::json())));
  add("peak learning rate", text_of(train.value("lr", nlohmann::json())));
  add("evaluation lengths", joined(eval.value("lengths", nlohmann::json::array())));
  add("evaluation samples per length", text_of(eval.value("samples", nlohmann::json())));
  add("weights", joined(eval.value("weights", nlohmann::json::array())));
  std::vector<std::string> probes;
  for (const char* p : {"depth", "variance", "dilution", "bridge"}) {
    const nlohmann::json probe = e.value("probe", nlohmann::json::object());
    if (probe.value(p, false)) probes.push_back(p);
  }
  add("probes", fmt::format("{}", fmt::join(probes, ", ")));
  page.table({"setting", "value"}, rows, false);
  if (fs::exists(out / "experiment.toml")) {
    page.pre(read_file(out / "experiment.toml"), "experiment.toml (the file as run)", true);
  }
  page.pre(e.dump(2), "experiment.json (the resolved experiment, every default filled in)");
}

void provenance_section(Page& page, const fs::path& out) {
  page.heading(2, "Provenance");
  const fs::path db = out / "results.sqlite";
  if (!fs::exists(db)) {
    page.paragraph(
        "This folder has no results.sqlite (it was written by a normlab older than the results "
        "store, docs/store.md), so the version, commit, host and times are not known.");
    return;
  }
  try {
    const QueryTable e = query_results_store(
        db,
        "SELECT name, config_hash, version, git_commit, host, started_at, finished_at FROM "
        "experiments ORDER BY id");
    page.paragraph(
        "From results.sqlite (docs/store.md): the normlab that ran the experiment, "
        "the commit it was built from (+dirty: with uncommitted changes), the host "
        "and the times (UTC).");
    std::vector<std::vector<std::string>> rows = e.rows;
    for (auto& r : rows) {
      if (r[3].empty()) r[3] = "(not recorded)";
      if (r[6].empty()) r[6] = "(not finished)";
    }
    page.table({"experiment", "config hash", "normlab version", "git commit", "host", "started",
                "finished"},
               rows, false);
    const QueryTable runs = query_results_store(
        db,
        "SELECT variant, seed, status, CASE WHEN seconds IS NULL THEN '' ELSE printf('%.1f', "
        "seconds) END, started_at, finished_at, "
        "run_dir, hash FROM runs ORDER BY variant, seed");
    page.heading(3, "Runs");
    page.table(
        {"variant", "seed", "status", "seconds", "started", "finished", "run folder", "run hash"},
        runs.rows);
  } catch (const InputError& err) {
    const std::string why = err.what();
    page.paragraph(why.find("no such table") != std::string::npos
                       ? "results.sqlite has the layout of a normlab older than the provenance "
                         "tables (docs/store.md), so the version, commit, host and times are not "
                         "known; running the experiment again (its finished runs are kept) "
                         "rebuilds the store."
                       : "results.sqlite could not be read: " + why);
  }
}

void metrics_section(Page& page, const fs::path& out, const nlohmann::json& e) {
  const std::optional<CsvTable> t = read_table_if(out / "summary.csv");
  if (!t || t->rows.empty()) return;
  const size_t variant = t->column("variant"), weights = t->column("weights"),
               metric = t->column("metric"), length = t->column("length"), mean = t->column("mean"),
               half = t->column("ci_half_width"), seeds = t->column("seeds");
  // The interval's ends cut to the metric's range (summary.csv of normlab since the cut; older
  // ones have only the half-width).
  const bool has_ends = t->has_column("ci_low") && t->has_column("ci_high");
  const size_t low = has_ends ? t->column("ci_low") : 0, high = has_ends ? t->column("ci_high") : 0;
  const auto [min_len, max_len] = training_lengths(e);
  page.heading(2, "Metrics against length");
  page.paragraph(fmt::format(
      "Each metric at every evaluation length, one figure per weights (raw, EMA, BEMA) and one "
      "line per scheme: the mean over seeds, with its 95% Student-t interval across seeds as "
      "the band, cut to the metric's range (none with one seed; a band much wider than the lines' "
      "spread is cut at the "
      "frame). The length axis is logarithmic when the lengths span a decade or more; the "
      "figures of a metric share their y range; the shaded interval is the training lengths{}. "
      "From summary.csv.",
      std::isfinite(min_len) ? fmt::format(" ({:g} .. {:g})", min_len, max_len) : ""));
  const std::vector<std::string> metrics = distinct(*t, metric);
  const auto has_metric = [&](const std::string& name) {
    return std::find(metrics.begin(), metrics.end(), name) != metrics.end();
  };
  for (const std::string& m : metrics) {
    // A chance row ("tvd_chance": the uniform predictor on the same samples, the floor of design
    // rule D1) is drawn in its metric's figures, not as a metric of its own.
    if (m.size() > 7 && m.compare(m.size() - 7, 7, "_chance") == 0 &&
        has_metric(m.substr(0, m.size() - 7))) {
      continue;
    }
    const std::string chance = m + "_chance";
    page.heading(3, m);
    page.begin_figures();
    // One y range for the metric's figures (each weights'), over the means and the chance
    // level; log lengths only when they span a decade or more.
    constexpr double kInf = std::numeric_limits<double>::infinity();
    double y_lo = kInf, y_hi = -kInf, n_lo = kInf, n_hi = -kInf, b_lo = kInf, b_hi = -kInf;
    for (const auto& row : t->rows) {
      if (row[metric] != m && row[metric] != chance) continue;
      const double mu = to_number(row[mean]), n = to_number(row[length]);
      const double h = to_number(row[half]);
      if (std::isfinite(mu)) y_lo = std::min(y_lo, mu), y_hi = std::max(y_hi, mu);
      if (std::isfinite(n)) n_lo = std::min(n_lo, n), n_hi = std::max(n_hi, n);
      const double lo = has_ends ? to_number(row[low]) : mu - h;
      const double hi = has_ends ? to_number(row[high]) : mu + h;
      if (std::isfinite(lo)) b_lo = std::min(b_lo, lo);
      if (std::isfinite(hi)) b_hi = std::max(b_hi, hi);
    }
    // The bands widen the shared range by at most half the means' span per side, as a single
    // figure's range does (svg_plot.hpp).
    if (y_lo <= y_hi) {
      const double cap = 0.5 * (y_hi - y_lo);
      if (b_lo < y_lo) y_lo = std::max(b_lo, y_lo - cap);
      if (b_hi > y_hi) y_hi = std::min(b_hi, y_hi + cap);
    }
    const bool log_lengths = n_lo > 0 && n_hi >= 10 * n_lo;
    const std::vector<std::string> variants = distinct(*t, variant);
    for (const std::string& w : distinct(*t, weights)) {
      svg::Figure f;
      f.title = fmt::format("{} against length ({} weights)", m, w);
      f.x = {"task length N", log_lengths, false};
      f.y = {m, false, false};
      if (y_lo <= y_hi) f.y.include = {y_lo, y_hi};
      if (std::isfinite(min_len) && std::isfinite(max_len)) {
        f.shade = svg::Shade{min_len, max_len, "training lengths"};
      }
      size_t most_seeds = 0;
      for (size_t vi = 0; vi < variants.size(); ++vi) {
        const std::string& v = variants[vi];
        svg::Series s;
        s.label = v;
        s.color = static_cast<int>(vi);  // the scheme's colour in every figure of the metric
        for (const auto& row : t->rows) {
          if (row[variant] != v || row[weights] != w || row[metric] != m) continue;
          const double mu = to_number(row[mean]), h = to_number(row[half]);
          s.x.push_back(to_number(row[length]));
          s.y.push_back(mu);
          s.lower.push_back(has_ends ? to_number(row[low]) : mu - h);
          s.upper.push_back(has_ends ? to_number(row[high]) : mu + h);
          most_seeds =
              std::max(most_seeds, static_cast<size_t>(std::max(0.0, to_number(row[seeds]))));
        }
        if (!s.x.empty()) f.series.push_back(std::move(s));
      }
      if (f.series.empty()) continue;
      // The chance level: the same samples for every scheme, so the first scheme's rows.
      svg::Series floor;
      floor.label = "chance (uniform predictor)";
      floor.reference = true;
      for (const auto& row : t->rows) {
        if (row[weights] != w || row[metric] != chance || row[variant] != f.series[0].label) {
          continue;
        }
        floor.x.push_back(to_number(row[length]));
        floor.y.push_back(to_number(row[mean]));
      }
      const bool with_floor = !floor.x.empty();
      if (with_floor) f.series.push_back(std::move(floor));
      page.figure(f, fmt::format("{} with {} weights: {} per scheme, 95% band across seeds; "
                                 "shaded: training lengths{}.",
                                 m, w, seeds_phrase(most_seeds),
                                 with_floor ? "; grey dots: the uniform predictor (chance)" : ""));
    }
    page.end_figures();
  }
}

void summary_tables_section(Page& page, const fs::path& out, const nlohmann::json& e) {
  const std::optional<CsvTable> t = read_table_if(out / "summary.csv");
  if (!t || t->rows.empty()) return;
  const size_t variant = t->column("variant"), weights = t->column("weights"),
               metric = t->column("metric"), length = t->column("length"), mean = t->column("mean"),
               half = t->column("ci_half_width");
  const bool has_ends = t->has_column("ci_low") && t->has_column("ci_high");
  const size_t low = has_ends ? t->column("ci_low") : 0, high = has_ends ? t->column("ci_high") : 0;
  const double max_len = training_lengths(e).second;
  std::vector<double> lengths;
  for (const auto& row : t->rows) {
    const double n = to_number(row[length]);
    if (std::find(lengths.begin(), lengths.end(), n) == lengths.end()) lengths.push_back(n);
  }
  std::sort(lengths.begin(), lengths.end());
  page.heading(2, "Summary tables");
  page.paragraph(
      "Mean [low, high] of the 95% Student-t interval across seeds, per scheme, weights and "
      "length (summary.csv), the interval cut to the metric's range (accuracy, TVD, ROC AUC in "
      "[0, 1], losses >= 0). * marks lengths beyond the longest training length "
      "(extrapolation).");
  for (const std::string& m : distinct(*t, metric)) {
    page.heading(3, "Table: " + m);
    std::vector<std::string> header = {"scheme", "weights"};
    for (double n : lengths) {
      header.push_back(
          fmt::format("N={:g}{}", n, std::isfinite(max_len) && n > max_len ? "*" : ""));
    }
    std::vector<std::vector<std::string>> rows;
    for (const std::string& v : distinct(*t, variant)) {
      for (const std::string& w : distinct(*t, weights)) {
        std::vector<std::string> cells = {v, w};
        bool any = false;
        for (double n : lengths) {
          std::string c = "-";
          for (const auto& row : t->rows) {
            if (row[variant] != v || row[weights] != w || row[metric] != m ||
                to_number(row[length]) != n) {
              continue;
            }
            const double mu = to_number(row[mean]), h = to_number(row[half]);
            // As in summary.md.
            const double lo = has_ends ? to_number(row[low]) : mu - h;
            const double hi = has_ends ? to_number(row[high]) : mu + h;
            c = interval_cell(mu, lo, hi);
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

void curves_section(Page& page, const fs::path& out) {
  const std::optional<CsvTable> t = read_table_if(out / "curves.csv");
  if (!t || t->rows.empty()) return;
  const size_t variant = t->column("variant"), step = t->column("step"),
               train = t->column("train_loss"), val = t->column("val_loss");
  SeedAverages train_loss, val_loss;
  for (const auto& row : t->rows) {
    const double x = to_number(row[step]);
    train_loss.add(row[variant], x, to_number(row[train]));
    val_loss.add(row[variant], x, to_number(row[val]));
  }
  page.heading(2, "Loss curves");
  page.paragraph(
      "Training loss (the logged batch losses) and validation loss (with [train] eval_every) "
      "against the step, per scheme: the mean over seeds at the steps every seed logged, with "
      "its 95% Student-t interval across seeds as the band. Log loss axis: the first steps' "
      "losses are far above the rest. From curves.csv.");
  page.begin_figures();
  for (const auto& [what, data] :
       {std::pair<std::string, const SeedAverages*>{"training loss", &train_loss},
        {"validation loss", &val_loss}}) {
    if (data->empty()) continue;
    svg::Figure f;
    f.title = what + " against step";
    f.x = {"step", false, true};
    f.y = {what + " (nats)", true, false};
    f.series = data->series();
    page.figure(f, fmt::format("{}: {} per scheme, 95% band across seeds.", what,
                               seeds_phrase(data->max_seeds())));
  }
  page.end_figures();
}

}  // namespace normlab::report
