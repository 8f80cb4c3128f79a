// Option validators whose messages say what was wrong and what is allowed, in one line.
// CLI11's own Range reports "Value 3.5 not in range 1 to 65536" for a non-integer, and a failed
// conversion as "Could not convert: --beta = warm"; these replace them.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "normlab/io/nearest_name.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/io/value_ranges.hpp"

namespace normlab::cli {

// One of `choices`, else "'prenorm' is not one of pre, post, ...; did you mean pre?".
inline CLI::Validator one_of(std::vector<std::string> choices) {
  return CLI::Validator(
      [choices](std::string& s) -> std::string {
        if (std::find(choices.begin(), choices.end(), s) != choices.end()) return "";
        const std::string near = nearest_name(s, choices);
        return fmt::format("'{}' is not one of {}{}", printable(s), fmt::join(choices, ", "),
                           near.empty() ? "" : "; did you mean " + near + "?");
      },
      "");
}

// An integer (decimal, the whole argument) in [lo, hi].
inline CLI::Validator integer_in(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        const bool is_integer = ec == std::errc() && end == s.data() + s.size();
        if (is_integer && v >= lo && v <= hi) return "";
        return fmt::format(
            "'{}' is {}; allowed: an integer from {} to {}", printable(s),
            is_integer || ec == std::errc::result_out_of_range ? "out of range" : "not an integer",
            lo, hi);
      },
      fmt::format("INT in [{} - {}]", lo, hi));
}

inline CLI::Validator integer_in(IntRange range) {
  return integer_in(range.min, range.max);
}

// Any value of an int option (the whole argument; range checks come later, in validate()).
inline CLI::Validator integer() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        int v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size()) return "";
        if (ec == std::errc::result_out_of_range)
          return fmt::format("'{}' is too large", printable(s));
        return fmt::format("'{}' is not an integer", printable(s));
      },
      "");  // help already shows the type
}

// A seed: an unsigned decimal integer from 0 to 2^64 - 1, no sign (CLI11 alone would wrap
// "-1" to 2^64 - 1).
inline CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        uint64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size()) return "";
        return fmt::format("'{}' is not a seed; allowed: an integer from 0 to {}", printable(s),
                           UINT64_MAX);
      },
      "");
}

// A path that names something: an empty --out would write into the current directory.
inline CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return s.empty() ? "an empty path; allowed: a file or folder name" : "";
      },
      "");
}

// A finite real number (the whole argument).
inline CLI::Validator real_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = s.empty() ? 0.0 : std::strtod(s.c_str(), &end);
        if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(v)) return "";
        return fmt::format("'{}' is not a number; allowed: a finite real number, e.g. 0.5",
                           printable(s));
      },
      "");
}

// A finite real number (the whole argument) in `range`; the range prints in short form
// ("(0, inf)"), not as CLI11's 309-digit fixed-point DBL_MAX.
inline CLI::Validator real_in(RealRange range) {
  return CLI::Validator(
      [range](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = s.empty() ? 0.0 : std::strtod(s.c_str(), &end);
        const bool is_number = !s.empty() && end == s.c_str() + s.size() && std::isfinite(v);
        if (is_number && range.contains(v)) return "";
        return fmt::format("'{}' is {}; allowed: a finite real number in {}", printable(s),
                           is_number ? "out of range" : "not a number", range.describe());
      },
      fmt::format("REAL in {}", range.describe()));
}

}  // namespace normlab::cli
