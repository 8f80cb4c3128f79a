#include "normlab/particles/array_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"

namespace normlab::particles {

namespace {

// The dimensions as words; a negative entry (any size) prints as '*'.
std::vector<std::string> shape_words(const std::vector<int64_t>& shape) {
  std::vector<std::string> parts;
  for (int64_t v : shape) parts.push_back(v < 0 ? "*" : std::to_string(v));
  return parts;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  return fmt::format("({})", fmt::join(shape_words(shape), ", "));
}

// Splits a line into whitespace-separated fields.
std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string field;
  while (in >> field) out.push_back(field);
  return out;
}

bool is_blank_or_comment(const std::string& line) {
  for (char ch : line) {
    if (ch == '#') return true;
    if (ch != ' ' && ch != '\t' && ch != '\r') return false;
  }
  return true;
}

}  // namespace

TextArray read_text_array(const std::filesystem::path& path, const std::vector<int64_t>& expected,
                          const std::string& what) {
  if (!std::filesystem::exists(path)) {
    throw InputError(fmt::format("{}: no such file ({})", path.string(), what));
  }
  const std::string text = read_file(path);
  const std::string file = path.string();
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  TextArray array;
  bool have_shape = false;
  int64_t rows_expected = 0, cols = 0, rows_read = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (is_blank_or_comment(line)) continue;
    const std::vector<std::string> fields = fields_of(line);
    if (!have_shape) {
      if (fields.empty() || fields[0] != "shape" || fields.size() < 2) {
        throw UsageError(
            fmt::format("{}:{}: expected a header line 'shape {}' before the values of the {}",
                        file, line_no, fmt::join(shape_words(expected), " "), what));
      }
      for (size_t i = 1; i < fields.size(); ++i) {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(fields[i].c_str(), &end, 10);
        if (*end != '\0' || errno != 0 || v < 1) {
          throw UsageError(fmt::format("{}:{}: shape entry '{}' is not a positive integer", file,
                                       line_no, fields[i]));
        }
        array.shape.push_back(v);
      }
      bool matches = array.shape.size() == expected.size();
      for (size_t i = 0; matches && i < expected.size(); ++i) {
        matches = expected[i] < 0 || expected[i] == array.shape[i];
      }
      if (!matches) {
        throw UsageError(fmt::format("{}:{}: wrong shape {} for the {}: expected {}", file, line_no,
                                     shape_string(array.shape), what, shape_string(expected)));
      }
      cols = array.shape.back();
      rows_expected = 1;
      for (size_t i = 0; i + 1 < array.shape.size(); ++i) rows_expected *= array.shape[i];
      array.values.reserve(static_cast<size_t>(rows_expected * cols));
      have_shape = true;
      continue;
    }
    if (rows_read == rows_expected) {
      throw UsageError(fmt::format("{}:{}: extra data line: the {} of shape {} has {} lines", file,
                                   line_no, what, shape_string(array.shape), rows_expected));
    }
    if (static_cast<int64_t>(fields.size()) != cols) {
      throw UsageError(
          fmt::format("{}:{}: wrong shape: {} values on this line, expected {} ({} {})", file,
                      line_no, fields.size(), cols, what, shape_string(array.shape)));
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      char* end = nullptr;
      const double v = std::strtod(fields[i].c_str(), &end);
      if (*end != '\0' || end == fields[i].c_str()) {
        throw UsageError(
            fmt::format("{}:{}: value {} ('{}') is not a number", file, line_no, i + 1, fields[i]));
      }
      if (std::isnan(v)) {
        throw UsageError(fmt::format("{}:{}: value {} is NaN", file, line_no, i + 1));
      }
      if (!std::isfinite(v)) {
        throw UsageError(fmt::format("{}:{}: value {} is infinite", file, line_no, i + 1));
      }
      array.values.push_back(v);
    }
    ++rows_read;
  }
  if (!have_shape) {
    throw UsageError(fmt::format("{}: empty file: expected 'shape {}' and the values of the {}",
                                 file, fmt::join(shape_words(expected), " "), what));
  }
  if (rows_read != rows_expected) {
    throw UsageError(
        fmt::format("{}:{}: wrong shape: file ends after {} data lines, the {} {} "
                    "needs {}",
                    file, line_no, rows_read, what, shape_string(array.shape), rows_expected));
  }
  return array;
}

std::string format_text_array(const TextArray& array) {
  std::string out = fmt::format("shape {}\n", fmt::join(array.shape, " "));
  const size_t cols = array.shape.empty() ? 0 : static_cast<size_t>(array.shape.back());
  for (size_t i = 0; i < array.values.size(); ++i) {
    out += fmt::format("{:.17g}", array.values[i]);
    out += (i + 1) % cols == 0 ? '\n' : ' ';
  }
  return out;
}

}  // namespace normlab::particles
