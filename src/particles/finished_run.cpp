#include "finished_run.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"

namespace normlab::particles {

namespace {

constexpr int kRecordVersion = 1;

// The columns of a trajectory row, in the order they are stored.
constexpr double Observation::*kColumns[] = {
    &Observation::t,        &Observation::mean_cos,           &Observation::min_cos,
    &Observation::variance, &Observation::mean_radius,        &Observation::mean_speed,
    &Observation::dcos_dt,  &Observation::one_minus_mean_cos, &Observation::mean_angle_from_start};
constexpr size_t kColumnCount = std::size(kColumns);

// JSON has no NaN or infinity: those are stored as null and read back as NaN.
nlohmann::json number(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
}
double read_number(const nlohmann::json& j) {
  return j.is_null() ? std::numeric_limits<double>::quiet_NaN() : j.get<double>();
}

// A fingerprint of a file the config names; a changed file changes the key.
std::string file_fingerprint(const std::string& path) {
  const std::string bytes = read_file(path);
  return fmt::format("{} bytes, hash {:016x}", bytes.size(), std::hash<std::string>{}(bytes));
}

}  // namespace

std::string finished_run_key(const ParticlesConfig& c, const FitOptions& fit, double early_t,
                             bool scalar_check) {
  std::string key = describe(c);
  if (c.init == InitKind::file)
    key += "init_file contents = " + file_fingerprint(c.init_file) + "\n";
  if (c.qkv == QkvKind::file) key += "qkv_file contents = " + file_fingerprint(c.qkv_file) + "\n";
  key += fmt::format("early_t = {}\nscalar_check = {}\n", early_t, scalar_check);
  if (scalar_check)
    key += fmt::format("fit = {} to {}, floor {}\n", fit.t_from, fit.t_to, fit.floor);
  return key;
}

void save_finished_run(const std::filesystem::path& path, const std::string& key,
                       const FinishedRun& run) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Observation& o : run.trajectory.rows) {
    nlohmann::json row = nlohmann::json::array();
    for (auto column : kColumns) row.push_back(number(o.*column));
    rows.push_back(std::move(row));
  }
  const IntegratorStats& s = run.trajectory.stats;
  nlohmann::json j;
  j["version"] = kRecordVersion;
  j["key"] = key;
  j["seconds"] = run.seconds;
  j["scalar_max_diff"] = number(run.scalar_max_diff);
  j["scalar_max_rel_diff_tail"] = number(run.scalar_max_rel_diff_tail);
  j["stats"] = {{"steps", s.steps},
                {"rejected", s.rejected},
                {"rhs_evals", s.rhs_evals},
                {"seconds", s.seconds}};
  j["rows"] = std::move(rows);
  write_file_atomic(path, j.dump() + "\n");
}

std::optional<FinishedRun> load_finished_run(const std::filesystem::path& path,
                                             const std::string& key, std::string& why) {
  why.clear();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(path));
    if (j.at("version").get<int>() != kRecordVersion) {
      why = "it was written by another version of normlab";
      return std::nullopt;
    }
    if (j.at("key").get<std::string>() != key) {
      why = "its settings differ from the file's";
      return std::nullopt;
    }
    FinishedRun run;
    run.seconds = j.at("seconds").get<double>();
    run.scalar_max_diff = read_number(j.at("scalar_max_diff"));
    run.scalar_max_rel_diff_tail = read_number(j.at("scalar_max_rel_diff_tail"));
    if (std::isnan(run.scalar_max_diff)) run.scalar_max_diff = -1;
    if (std::isnan(run.scalar_max_rel_diff_tail)) run.scalar_max_rel_diff_tail = -1;
    const nlohmann::json& s = j.at("stats");
    run.trajectory.stats.steps = s.at("steps").get<int64_t>();
    run.trajectory.stats.rejected = s.at("rejected").get<int64_t>();
    run.trajectory.stats.rhs_evals = s.at("rhs_evals").get<int64_t>();
    run.trajectory.stats.seconds = s.at("seconds").get<double>();
    for (const nlohmann::json& row : j.at("rows")) {
      if (!row.is_array() || row.size() != kColumnCount) {
        why = fmt::format("a row does not have {} numbers", kColumnCount);
        return std::nullopt;
      }
      Observation o;
      for (size_t k = 0; k < kColumnCount; ++k) o.*kColumns[k] = read_number(row[k]);
      run.trajectory.rows.push_back(o);
    }
    if (run.trajectory.rows.empty()) {
      why = "it has no rows";
      return std::nullopt;
    }
    return run;
  } catch (const nlohmann::json::exception& e) {
    why = fmt::format("it cannot be read ({})", e.what());
    return std::nullopt;
  }
}

}  // namespace normlab::particles
