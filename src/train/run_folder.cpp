#include "normlab/train/run_folder.hpp"

#include <fmt/format.h>

#include <fstream>

#include <nlohmann/json.hpp>

namespace normlab {

std::string run_folder_name(const std::string& variant_slug, uint64_t seed) {
  return fmt::format("{}__seed{}", variant_slug, seed);
}

std::map<int64_t, CurvePoint> read_run_curve(const std::filesystem::path& metrics_file) {
  const auto number = [](const nlohmann::json& x) { return x.is_number() ? x.get<double>() : NAN; };
  std::map<int64_t, CurvePoint> curve;
  std::ifstream in(metrics_file);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      break;  // a torn last line from a killed process, or a damaged one: the curve ends there
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

}  // namespace normlab
