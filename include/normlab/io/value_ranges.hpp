// Allowed ranges of config values, declared once per field and checked by every reader (TOML,
// JSON, command line) before a value is used or narrowed.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace normlab {

// An integer interval [min, max].
struct IntRange {
  int64_t min, max;
  bool contains(int64_t v) const { return v >= min && v <= max; }
};

// A real interval of finite numbers; messages write it as "[0, 1)" or "(0, inf)".
struct RealRange {
  double min, max;
  bool min_inclusive = true, max_inclusive = true;
  bool contains(double v) const;
  std::string describe() const;
};

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

}  // namespace normlab
