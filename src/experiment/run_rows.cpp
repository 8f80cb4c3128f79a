#include "normlab/run_rows.hpp"

#include <fmt/format.h>

#include <fstream>

#include "normlab/atomic_file.hpp"
#include "normlab/provenance.hpp"
#include "normlab/trainer.hpp"

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

}  // namespace

std::string run_hash(const fs::path& run_dir) {
  nlohmann::json j = nlohmann::json::parse(read_file(run_dir / "run.json"));
  j.erase("status");
  j.erase("label");
  return fnv1a_hex(j.dump());  // object keys are sorted: the dump is canonical
}

std::map<int64_t, CurvePoint> read_run_curve(const fs::path& metrics_file) {
  std::map<int64_t, CurvePoint> curve;
  std::ifstream in(metrics_file);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      break;
    }
    if (!j.contains("step")) continue;
    const int64_t step = j.at("step").get<int64_t>();
    CurvePoint& p = curve[step];
    p.step = step;
    if (j.contains("loss")) p.train_loss = number(j.at("loss"));
    if (j.contains("val_loss")) p.val_loss = number(j.at("val_loss"));
  }
  return curve;
}

RunRows gather_run_rows(const Experiment& e, const Variant& v, uint64_t seed, const fs::path& out) {
  const fs::path dir = run_directory(out, v, seed);
  RunRows rows;
  RunRecord& r = rows.run;
  r.hash = run_hash(dir);
  r.variant = v.label;
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
    const nlohmann::json j = nlohmann::json::parse(read_file(file));
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

ExperimentRecord experiment_record(const Experiment& e) {
  ExperimentRecord x;
  x.name = e.name;
  nlohmann::json config = to_json(e);
  x.config_json = config.dump();
  config.erase("file");  // the same study read from another path is the same experiment
  x.config_hash = fnv1a_hex(config.dump());
  x.version = normlab_version();
  x.git_commit = build_git_commit();
  x.host = host_name();
  x.started_at = utc_now();
  return x;
}

}  // namespace normlab
