#include "normlab/experiment/run_rows.hpp"

#include <fmt/format.h>

#include <cmath>

#include "normlab/io/atomic_file.hpp"
#include "normlab/io/json_file.hpp"
#include "normlab/store/provenance.hpp"
#include "normlab/train/trainer.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

// FNV-1a, 64 bits: a fixed, portable hash (not for security; collisions are irrelevant at the
// scale of one results folder).
std::string fnv1a_hex(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

double number(const nlohmann::json& x) {
  return x.is_number() ? x.get<double>() : NAN;
}

// run.json without status and label, as this version reads it (settings_as_read: a field an
// older normlab did not write is its default): the run's settings, the same for the same run on
// any machine and from any version. Object keys are sorted, so the dump is canonical.
std::string run_settings_json(const fs::path& run_dir) {
  return read_json_file(run_dir / "run.json", [](nlohmann::json j) {
    j.erase("status");
    j.erase("label");
    return settings_as_read(std::move(j)).dump();
  });
}

}  // namespace

std::string run_hash(const fs::path& run_dir) {
  return fnv1a_hex(run_settings_json(run_dir));
}

RunRows gather_run_rows(const Experiment& e, const Variant& v, uint64_t seed, const fs::path& out) {
  const fs::path dir = run_directory(out, v, seed);
  RunRows rows;
  RunRecord& r = rows.run;
  r.config_json = run_settings_json(dir);
  r.hash = fnv1a_hex(r.config_json);
  r.variant = v.label;
  r.base_variant = v.base_label;
  r.scheme = scheme_label(v.model);
  r.norm = to_string(v.model.norm);
  r.seed = seed;
  nlohmann::json values{{"variant", v.label}, {"seed", seed}};
  for (const auto& [key, value] : v.point) values[key] = value;
  r.values_json = values.dump();
  r.status = to_string(read_run_status(dir));
  r.run_dir = fs::relative(dir, out).string();
  for (const std::string& w : e.weights) {
    const fs::path file = dir / ("eval_" + w + ".json");
    if (!fs::exists(file)) continue;
    read_json_file(file, [&](const nlohmann::json& j) {
      for (const auto& length : j.at("results")) {
        for (const auto& [metric, m] : length.at("metrics").items()) {
          ResultRecord x;
          x.weights = w;
          x.metric = metric;
          x.length = length.at("length").get<int64_t>();
          x.seq_len = length.at("seq_len").get<int64_t>();
          x.value = number(m.at("value"));
          x.ci_low = number(m.at("ci_low"));
          x.ci_high = number(m.at("ci_high"));
          x.count = m.at("count").get<int64_t>();
          rows.results.push_back(x);
        }
      }
    });
  }
  for (const auto& [step, p] : read_run_curve(dir / "metrics.jsonl")) rows.curves.push_back(p);
  if (fs::is_directory(dir)) {
    for (const fs::directory_entry& f : fs::directory_iterator(dir)) {
      const std::string name = f.path().filename().string();
      const std::string ext = f.path().extension().string();
      if (name.rfind("probe_", 0) != 0 || (ext != ".csv" && ext != ".json")) continue;
      rows.probes.push_back({f.path().stem().string(), ext.substr(1), read_file(f.path())});
    }
  }
  return rows;
}

namespace {

nlohmann::json or_null(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
}

}  // namespace

nlohmann::json run_rows_to_json(const RunRows& rows) {
  const RunRecord& r = rows.run;
  nlohmann::json j;
  j["run"] = {{"hash", r.hash},
              {"variant", r.variant},
              {"scheme", r.scheme},
              {"norm", r.norm},
              {"seed", r.seed},
              {"values_json", r.values_json},
              {"base_variant", r.base_variant},
              {"config_json", r.config_json},
              {"status", r.status},
              {"run_dir", r.run_dir},
              {"started_at", r.started_at},
              {"finished_at", r.finished_at},
              {"seconds", or_null(r.seconds)}};
  j["results"] = nlohmann::json::array();
  for (const ResultRecord& x : rows.results) {
    j["results"].push_back({x.weights, x.metric, x.length, x.seq_len, x.count, or_null(x.value),
                            or_null(x.ci_low), or_null(x.ci_high)});
  }
  j["curves"] = nlohmann::json::array();
  for (const CurvePoint& p : rows.curves) {
    j["curves"].push_back({p.step, or_null(p.train_loss), or_null(p.val_loss)});
  }
  j["probes"] = nlohmann::json::array();
  for (const ProbeRecord& p : rows.probes) j["probes"].push_back({p.probe, p.format, p.content});
  return j;
}

RunRows run_rows_from_json(const nlohmann::json& j) {
  RunRows rows;
  RunRecord& r = rows.run;
  const nlohmann::json& run = j.at("run");
  r.hash = run.at("hash").get<std::string>();
  r.variant = run.at("variant").get<std::string>();
  r.scheme = run.at("scheme").get<std::string>();
  r.norm = run.at("norm").get<std::string>();
  r.seed = run.at("seed").get<uint64_t>();
  r.values_json = run.at("values_json").get<std::string>();
  r.base_variant = run.at("base_variant").get<std::string>();
  r.config_json = run.at("config_json").get<std::string>();
  r.status = run.at("status").get<std::string>();
  r.run_dir = run.at("run_dir").get<std::string>();
  r.started_at = run.at("started_at").get<std::string>();
  r.finished_at = run.at("finished_at").get<std::string>();
  r.seconds = number(run.at("seconds"));
  for (const nlohmann::json& x : j.at("results")) {
    ResultRecord y;
    y.weights = x.at(0).get<std::string>();
    y.metric = x.at(1).get<std::string>();
    y.length = x.at(2).get<int64_t>();
    y.seq_len = x.at(3).get<int64_t>();
    y.count = x.at(4).get<int64_t>();
    y.value = number(x.at(5));
    y.ci_low = number(x.at(6));
    y.ci_high = number(x.at(7));
    rows.results.push_back(y);
  }
  for (const nlohmann::json& p : j.at("curves")) {
    rows.curves.push_back({p.at(0).get<int64_t>(), number(p.at(1)), number(p.at(2))});
  }
  for (const nlohmann::json& p : j.at("probes")) {
    rows.probes.push_back(
        {p.at(0).get<std::string>(), p.at(1).get<std::string>(), p.at(2).get<std::string>()});
  }
  return rows;
}

std::string experiment_config_hash(nlohmann::json config) {
  config.erase("file");  // the same study read from another path is the same experiment
  return fnv1a_hex(config.dump());
}

ExperimentRecord experiment_record(const Experiment& e) {
  ExperimentRecord x;
  x.name = e.name;
  const nlohmann::json config = to_json(e);
  x.config_json = config.dump();
  x.config_hash = experiment_config_hash(config);
  x.version = normlab_version();
  x.git_commit = build_git_commit();
  x.host = host_name();
  x.started_at = utc_now();
  return x;
}

}  // namespace normlab
