// Strict reading of experiment files (TOML): every key must be known and of the right type.
//
// A TomlSection wraps one table. Each get_* call marks its key as known; finish() rejects any
// key that was never asked for. Errors are UsageError with "FILE:LINE: ..." so the user sees
// the file, the line and the key, and what is allowed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "normlab/io/value_ranges.hpp"

namespace toml {
inline namespace v3 {
class table;
class node;
}  // namespace v3
}  // namespace toml

namespace normlab {

// A TOML number as the double it is exactly: a float, or an integer a double holds without
// rounding (every integer up to 2^53 in magnitude, and larger ones that are multiples of a power
// of two). std::nullopt for any other node, and for an integer a double would round: the one
// reader of real-valued numbers for experiment files, --set and claims files.
std::optional<double> exact_double(const toml::node& node);

class TomlSection {
 public:
  // `name` is how the section is shown in messages, e.g. "[train]" or "top level".
  TomlSection(const toml::table* table, std::string file, std::string name);

  bool has(const std::string& key) const;
  // Whether the key is present and a boolean (for keys that take a boolean or a word).
  bool holds_bool(const std::string& key) const;

  std::string get_string(const std::string& key, const std::string& fallback);
  // Numbers must be finite (TOML also spells inf and nan); with a range, inside it.
  double get_double(const std::string& key, double fallback);
  double get_double(const std::string& key, double fallback, const RealRange& range);
  int64_t get_int(const std::string& key, int64_t fallback);
  // An integer in [min, max]: a value outside is an error, never truncated.
  int64_t get_int(const std::string& key, int64_t fallback, const IntRange& range);
  bool get_bool(const std::string& key, bool fallback);
  std::vector<int64_t> get_int_list(const std::string& key, const std::vector<int64_t>& fallback);
  std::vector<double> get_double_list(const std::string& key, const std::vector<double>& fallback);
  std::vector<std::string> get_string_list(const std::string& key,
                                           const std::vector<std::string>& fallback);

  // A string that must be one of `allowed`.
  std::string get_choice(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& allowed);

  // A sub-table; an absent key gives an empty section. Call finish() on it too.
  TomlSection section(const std::string& key);

  // An array of tables ([[key]] ... ); an absent key gives an empty list. Call finish() on
  // each.
  std::vector<TomlSection> table_list(const std::string& key);

  // Throws UsageError naming the first key that no get_* asked for.
  void finish() const;

  // "FILE:LINE: " for a key, for messages built by callers.
  std::string where(const std::string& key) const;
  const std::string& file() const { return file_; }

 private:
  const toml::node* lookup(const std::string& key);
  [[noreturn]] void type_error(const std::string& key, const char* expected) const;

  const toml::table* table_;
  std::string file_;
  std::string name_;
  std::set<std::string> known_;
};

// "FILE:LINE: " of a node: the file it was parsed from (`file` when unknown), or "--set K=V: "
// for a value given on the command line.
std::string node_location(const std::string& file, const toml::node& node);

// Parses a TOML file (a regular file only: a FIFO or device is refused, not read); a syntax
// error becomes an InputError "FILE:LINE:COL: description".
// The returned table must outlive every TomlSection made from it.
std::shared_ptr<toml::table> parse_toml_file(const std::filesystem::path& path);

}  // namespace normlab
