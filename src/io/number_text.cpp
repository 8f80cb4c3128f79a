#include "normlab/io/number_text.hpp"

#include <cmath>

#include <fmt/format.h>

namespace normlab {

std::string number_text(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "nan";
}

nlohmann::json number_json(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace normlab
