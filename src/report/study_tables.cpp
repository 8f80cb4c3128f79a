#include "report/study_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "normlab/probes/seed_interval.hpp"
#include "normlab/store/results_store.hpp"
#include "normlab/train/run_folder.hpp"
#include "report/report_data.hpp"

namespace normlab::report {
namespace fs = std::filesystem;

namespace {

std::string num(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "nan";
}

std::string curve_cell(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "";
}

struct RunId {
  std::string label, slug;
};

std::vector<RunId> variants_of(const nlohmann::json& e) {
  std::vector<RunId> out;
  for (const auto& v : e.value("variants", nlohmann::json::array())) {
    out.push_back({v.value("label", ""), v.value("slug", "")});
  }
  return out;
}

std::vector<uint64_t> seeds_of(const nlohmann::json& e) {
  std::vector<uint64_t> out;
  for (const auto& s : e.value("seeds", nlohmann::json::array())) {
    if (s.is_number_unsigned()) out.push_back(s.get<uint64_t>());
  }
  return out;
}

// summary.csv's rows from the store's results of the study's variants and seeds: the mean
// across seeds and its interval (interval_across_seeds, as `normlab run` writes them).
CsvTable live_summary(const fs::path& db, const std::vector<RunId>& variants,
                      const std::set<uint64_t>& seeds) {
  const QueryTable rows = query_results_store(
      db, "SELECT variant, seed, weights, metric, length, value FROM results ORDER BY rowid");
  std::vector<std::string> metrics, weights;
  std::map<std::tuple<std::string, std::string, std::string, int64_t>, std::vector<double>> groups;
  for (const auto& r : rows.rows) {
    const bool known = std::any_of(variants.begin(), variants.end(),
                                   [&](const RunId& v) { return v.label == r[0]; });
    if (!known || seeds.count(std::stoull(r[1])) == 0) continue;
    if (std::find(metrics.begin(), metrics.end(), r[3]) == metrics.end()) metrics.push_back(r[3]);
    if (std::find(weights.begin(), weights.end(), r[2]) == weights.end()) weights.push_back(r[2]);
    groups[{r[3], r[0], r[2], std::stoll(r[4])}].push_back(to_number(r[5]));
  }
  CsvTable t;
  t.file = db;
  t.columns = {"variant",       "weights", "metric", "length", "mean",
               "ci_half_width", "seeds",   "ci_low", "ci_high"};
  for (const std::string& m : metrics) {
    for (const RunId& v : variants) {
      for (const std::string& w : weights) {
        for (const auto& [key, xs] : groups) {
          if (std::get<0>(key) != m || std::get<1>(key) != v.label || std::get<2>(key) != w) {
            continue;
          }
          const SeedInterval c = interval_across_seeds(m, xs);
          t.rows.push_back({v.label, w, m, std::to_string(std::get<3>(key)), num(c.mean),
                            num(c.half), std::to_string(c.seeds), num(c.low), num(c.high)});
        }
      }
    }
  }
  return t;
}

// curves.csv's rows from every run folder's metrics.jsonl as it is now.
CsvTable live_curves(const fs::path& out, const std::vector<RunId>& variants,
                     const std::vector<uint64_t>& seeds) {
  CsvTable t;
  t.file = out / "runs";
  t.columns = {"variant", "seed", "step", "train_loss", "val_loss"};
  for (const RunId& v : variants) {
    for (uint64_t seed : seeds) {
      const fs::path file = out / "runs" / run_folder_name(v.slug, seed) / "metrics.jsonl";
      for (const auto& [step, p] : read_run_curve(file)) {
        t.rows.push_back({v.label, std::to_string(seed), std::to_string(step),
                          curve_cell(p.train_loss), curve_cell(p.val_loss)});
      }
    }
  }
  return t;
}

}  // namespace

StudyTables read_study_tables(const fs::path& out, const nlohmann::json& experiment) {
  StudyTables s;
  s.out = out;
  s.experiment = experiment;
  s.name = experiment.contains("name") && experiment["name"].is_string()
               ? experiment["name"].get<std::string>()
               : out.filename().string();
  s.summary = read_table_if(out / "summary.csv");
  if (s.summary && !s.summary->has_column("ci_low")) {
    // summary.csv of a normlab before the interval was cut to the metric's range: mean ± half.
    const size_t mean = s.summary->column("mean"), half = s.summary->column("ci_half_width");
    s.summary->columns.insert(s.summary->columns.end(), {"ci_low", "ci_high"});
    for (auto& row : s.summary->rows) {
      const double mu = to_number(row[mean]), h = to_number(row[half]);
      row.push_back(num(mu - h));
      row.push_back(num(mu + h));
    }
  }
  s.curves = read_table_if(out / "curves.csv");
  const std::vector<RunId> variants = variants_of(experiment);
  const std::vector<uint64_t> seeds = seeds_of(experiment);
  s.runs_total = static_cast<int64_t>(variants.size() * seeds.size());
  const fs::path db = out / "results.sqlite";
  if (!fs::exists(db)) return s;  // a folder of a normlab before the store: its files only
  const QueryTable open = query_results_store(
      db, "SELECT COUNT(*) FROM experiments WHERE finished_at IS NULL OR finished_at = ''");
  s.running = !s.summary || open.rows.at(0).at(0) != "0";
  const std::set<uint64_t> seed_set(seeds.begin(), seeds.end());
  const QueryTable runs = query_results_store(db, "SELECT variant, seed, status FROM runs");
  for (const auto& r : runs.rows) {
    const bool known = std::any_of(variants.begin(), variants.end(),
                                   [&](const RunId& v) { return v.label == r[0]; });
    if (known && seed_set.count(std::stoull(r[1])) > 0 &&
        (r[2] == "finished" || r[2] == "diverged")) {
      ++s.runs_ended;
    }
  }
  if (s.running) {
    s.summary = live_summary(db, variants, seed_set);
    s.curves = live_curves(out, variants, seeds);
  }
  return s;
}

std::map<std::string, VariantParts> variant_parts(const nlohmann::json& experiment) {
  std::map<std::string, VariantParts> parts;
  for (const auto& v : experiment.value("variants", nlohmann::json::array())) {
    const std::string label = v.value("label", "");
    const std::string base = v.value("base_label", label);
    const bool has_point =
        label.size() > base.size() + 1 && label.compare(0, base.size(), base) == 0;
    parts[label] = {base, has_point ? label.substr(base.size() + 1) : ""};
  }
  return parts;
}

SchemeColours::SchemeColours(const std::vector<const StudyTables*>& studies) {
  for (const StudyTables* s : studies) {
    const std::map<std::string, VariantParts> parts = variant_parts(s->experiment);
    for (const auto& v : s->experiment.value("variants", nlohmann::json::array())) {
      const std::string label = v.value("label", "");
      const std::string& base = parts.at(label).base;
      auto it = std::find(schemes_.begin(), schemes_.end(), base);
      if (it == schemes_.end()) it = schemes_.insert(schemes_.end(), base);
      by_label_[label] = static_cast<int>(it - schemes_.begin());
    }
  }
}

int SchemeColours::of(const std::string& variant_label) const {
  const auto it = by_label_.find(variant_label);
  return it == by_label_.end() ? -1 : it->second;
}

}  // namespace normlab::report
