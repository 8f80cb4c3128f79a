#include "normlab/io/value_ranges.hpp"

#include <fmt/format.h>

#include <cmath>

namespace normlab {

bool RealRange::contains(double v) const {
  return std::isfinite(v) && (min_inclusive ? v >= min : v > min) &&
         (max_inclusive ? v <= max : v < max);
}

std::string RealRange::describe() const {
  return fmt::format("{}{}, {}{}", min_inclusive ? "[" : "(", min, max,
                     max_inclusive && std::isfinite(max) ? "]" : ")");
}

}  // namespace normlab
