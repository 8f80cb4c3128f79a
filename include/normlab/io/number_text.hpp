// A real number as normlab's probe tables, summaries and reports write it: six significant
// digits ("{:.6g}"), and "nan" for any value that is not finite; in JSON, null for such a value
// (JSON has no NaN or infinity).
#pragma once

#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace normlab {

// A value not available (a fit of fewer than two points, a probe with nothing to measure).
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string number_text(double v);
nlohmann::json number_json(double v);

}  // namespace normlab
