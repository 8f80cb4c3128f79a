// A plain text format for the arrays the particle simulator reads (initial directions, Q/K/V).
//
//     # comment lines start with '#'; blank lines are ignored
//     shape 2 3            <- first other line: the word "shape" and the dimensions
//     0.1  0.2  0.3        <- then the values in row-major order, one innermost row per line
//     1e-3 -2   4.5           (whitespace-separated, exactly shape[-1] numbers per line)
//
// The file must hold exactly prod(shape[:-1]) data lines. NaN, infinities, a wrong count on a
// line, or a shape other than the expected one are rejected with a message "FILE:LINE: ..." as
// a UsageError (the command line exits with code 2); a file that cannot be read is an
// InputError.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace normlab::particles {

struct TextArray {
  std::vector<int64_t> shape;  // dimensions, outermost first
  std::vector<double> values;  // row-major, size = product of shape
};

// Reads a text array and checks that its shape is `expected` (a negative entry: any size). `what`
// names the array in messages, e.g. "initial directions (n, d)".
TextArray read_text_array(const std::filesystem::path& path, const std::vector<int64_t>& expected,
                          const std::string& what);

// The file contents for `array` (17 significant digits: reading it back gives the same bits).
std::string format_text_array(const TextArray& array);

}  // namespace normlab::particles
