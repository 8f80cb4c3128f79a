// Loss curves across the runs of an experiment: OUT/curves.csv from every run's metrics.jsonl,
// and OUT/curves.png, the validation loss against the step per variant (docs/experiments.md).
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <map>

#include "normlab/atomic_file.hpp"
#include "normlab/experiment.hpp"
#include "normlab/plot.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

struct Point {
  double train = NAN, val = NAN;
};

// step → (training loss, validation loss) of one run's metrics.jsonl; a torn last line (a
// killed run) ends the reading.
std::map<int64_t, Point> read_curve(const fs::path& file) {
  std::map<int64_t, Point> curve;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      break;
    }
    if (!j.contains("step")) continue;
    Point& p = curve[j.at("step").get<int64_t>()];
    auto number = [](const nlohmann::json& x) { return x.is_number() ? x.get<double>() : NAN; };
    if (j.contains("loss")) p.train = number(j.at("loss"));
    if (j.contains("val_loss")) p.val = number(j.at("val_loss"));
  }
  return curve;
}

std::string cell(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "";
}

}  // namespace

bool write_curves(const Experiment& e, const fs::path& out) {
  std::string csv = "variant,seed,step,train_loss,val_loss\n";
  PlotSpec spec;
  spec.title = fmt::format("{}: validation loss", e.name);
  spec.x_label = "step";
  spec.y_label = "validation loss (nats)";
  for (const Variant& v : e.variants) {
    // step → validation losses of the seeds that have one; plotted where every seed has one.
    std::map<int64_t, std::vector<double>> val;
    for (uint64_t seed : e.seeds) {
      const fs::path file = run_directory(out, v, seed) / "metrics.jsonl";
      for (const auto& [step, p] : read_curve(file)) {
        csv += fmt::format("{},{},{},{},{}\n", v.label, seed, step, cell(p.train), cell(p.val));
        if (!std::isnan(p.val)) val[step].push_back(p.val);
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
  return write_line_plot(out / "curves.png", spec);
}

}  // namespace normlab
