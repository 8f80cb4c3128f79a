// The sections of a kind = "particles" folder (report_sections.hpp): the study, the mean
// cosine, 1 − mean cosine and mean radius against t per run (the mean over a run's seeds), the
// summary table and every run's configuration.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "normlab/base/errors.hpp"
#include "normlab/io/json_file.hpp"
#include "report/report_data.hpp"
#include "report/report_sections.hpp"

namespace normlab::report {
namespace fs = std::filesystem;
namespace {

// Whether t spans more than two decades (t = 0 aside): then t goes on a log axis.
bool spans_decades(const std::vector<svg::Series>& series) {
  double lo = INFINITY, hi = 0;
  for (const svg::Series& s : series) {
    for (double t : s.x) {
      if (t > 0) {
        lo = std::min(lo, t);
        hi = std::max(hi, t);
      }
    }
  }
  return hi > 0 && hi / lo > 100;
}

}  // namespace

void particle_sections(Page& page, const fs::path& out) {
  const nlohmann::json summary = parse_json_file(out / "summary.json");
  const CsvTable runs = read_csv_table(out / "particles_summary.csv");
  const size_t run = runs.column("run"), label = runs.column("label");

  page.heading(2, "Study");
  std::vector<std::vector<std::string>> about;
  if (summary.contains("title") && summary["title"].is_string()) {
    about.push_back({"title", summary["title"].get<std::string>()});
  }
  if (summary.contains("file") && summary["file"].is_string()) {
    about.push_back({"study file", summary["file"].get<std::string>()});
  }
  about.push_back({"runs", std::to_string(runs.rows.size())});
  if (summary.contains("seconds") && summary["seconds"].is_number()) {
    about.push_back({"wall time (the last normlab run of the study)",
                     fmt::format("{:.1f} s", summary["seconds"].get<double>())});
  }
  page.table({"setting", "value"}, about, false);
  page.paragraph(
      "Tokens as particles on the sphere under each normalization scheme's ODE "
      "(docs/particles.md). A run with several seeds is one line: the mean over its seeds "
      "with a 95% band across seeds.");

  SeedAverages mean_cos, one_minus, radius;
  std::vector<std::string> missing;
  for (const auto& row : runs.rows) {
    const fs::path csv = out / (row[run] + ".csv");
    if (!fs::exists(csv)) {
      missing.push_back(row[run]);
      continue;
    }
    const CsvTable t = read_csv_table(csv);
    const size_t c_t = t.column("t"), c_cos = t.column("mean_cos"),
                 c_one = t.column("one_minus_mean_cos"), c_r = t.column("mean_radius");
    for (const auto& r : t.rows) {
      const double time = to_number(r[c_t]);
      mean_cos.add(row[label], time, to_number(r[c_cos]));
      one_minus.add(row[label], time, to_number(r[c_one]));
      radius.add(row[label], time, to_number(r[c_r]));
    }
  }
  page.heading(2, "Trajectories");
  if (!missing.empty()) {
    page.paragraph(fmt::format("No trajectory file for: {}.", fmt::join(missing, ", ")));
  }
  const std::vector<svg::Series> cos_series = mean_cos.series();
  const bool log_t = spans_decades(cos_series);
  const std::string t_note =
      log_t ? " Log t axis (t spans more than two decades); the t = 0 rows cannot show on it." : "";
  const svg::Axis t_axis{"t (depth)", log_t, false};
  page.begin_figures();
  if (!mean_cos.empty()) {
    svg::Figure f;
    f.title = "mean pairwise cosine against t";
    f.x = t_axis;
    f.y = {"mean cos", false, false};
    f.series = cos_series;
    page.figure(f, "Mean pairwise cosine of the tokens' directions." + t_note);
    svg::Figure g;
    g.title = "1 − mean cosine against t";
    g.x = t_axis;
    g.y = {"1 − mean cos", true, false};
    g.series = one_minus.series();
    page.figure(g, "1 − mean cosine (log scale): the approach to consensus." + t_note);
  }
  bool radius_moves = false;
  for (const svg::Series& s : radius.series()) {
    for (double r : s.y)
      radius_moves = radius_moves || std::abs(r - s.y.front()) > 1e-9 * std::abs(s.y.front());
  }
  if (radius_moves) {
    svg::Figure f;
    f.title = "mean radius against t";
    f.x = t_axis;
    f.y = {"mean radius", true, false};
    f.series = radius.series();
    page.figure(f,
                "Mean radius of the tokens (log scale); constant for the schemes without a "
                "radial law." +
                    t_note);
  }
  page.end_figures();

  page.heading(2, "Summary table");
  page.paragraph(
      "particles_summary.csv: per run the initial velocity and speed, the terminal "
      "fits and the radius growth exponent (docs/particles.md).");
  page.table(runs.columns, runs.rows);

  page.heading(2, "Run configurations");
  for (const auto& r : summary.value("runs", nlohmann::json::array())) {
    if (!r.is_object()) continue;
    const std::string name = r.value("name", r.value("label", std::string("run")));
    std::string text = r.contains("config") && r["config"].is_string()
                           ? r["config"].get<std::string>()
                           : r.dump(2);
    page.pre(text, name);
  }
  page.pre(summary.dump(2), "summary.json (every run's numbers)");
}

}  // namespace normlab::report
