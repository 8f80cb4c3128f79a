#include "normlab/io/toml_reader.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>

#include <cmath>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/printable.hpp"

namespace normlab {
namespace {

constexpr const char* kExactNumber =
    "a number a double holds exactly (an integer beyond ±2^53 would be rounded: write it as a "
    "float, e.g. 1e16)";
constexpr const char* kExactNumbers =
    "an array of numbers a double holds exactly (an integer beyond ±2^53 would be rounded: "
    "write it as a float, e.g. 1e16)";

// "FILE:LINE: " for a node read from the file; "--set KEY=VALUE: " for a value given on the
// command line (experiment/overrides.hpp gives such values that source path).
}  // namespace

std::optional<double> exact_double(const toml::node& node) {
  if (const auto* f = node.as_floating_point()) return f->get();
  const auto* i = node.as_integer();
  if (i == nullptr) return std::nullopt;
  const int64_t v = i->get();
  const double d = static_cast<double>(v);
  // 2^63 is outside int64_t: converting it back would be undefined.
  if (d >= 9223372036854775808.0 || static_cast<int64_t>(d) != v) return std::nullopt;
  return d;
}

std::string node_location(const std::string& file, const toml::node& node) {
  const auto& path = node.source().path;
  if (path != nullptr && path->starts_with("--set ")) return *path + ": ";
  // A node merged from another file (`extends`) names that file.
  const std::string& from = path != nullptr && !path->empty() ? *path : file;
  return fmt::format("{}:{}: ", from, node.source().begin.line);
}

TomlSection::TomlSection(const toml::table* table, std::string file, std::string name)
    : table_(table), file_(std::move(file)), name_(std::move(name)) {}

bool TomlSection::has(const std::string& key) const {
  return table_ != nullptr && table_->contains(key);
}

bool TomlSection::holds_bool(const std::string& key) const {
  return has(key) && table_->get(key)->is_boolean();
}

std::string TomlSection::where(const std::string& key) const {
  if (table_ != nullptr) {
    if (const toml::node* node = table_->get(key)) return node_location(file_, *node);
    if (table_->source().begin.line > 0) {
      return fmt::format("{}:{}: ", file_, table_->source().begin.line);
    }
  }
  return file_ + ": ";
}

const toml::node* TomlSection::lookup(const std::string& key) {
  known_.insert(key);
  if (table_ == nullptr) return nullptr;
  return table_->get(key);
}

void TomlSection::type_error(const std::string& key, const char* expected) const {
  throw UsageError(fmt::format("{}key '{}' in {} must be {}", where(key), key, name_, expected));
}

std::string TomlSection::get_string(const std::string& key, const std::string& fallback) {
  const toml::node* node = lookup(key);
  if (node == nullptr) return fallback;
  if (!node->is_string()) type_error(key, "a string");
  return std::string(*node->value<std::string>());
}

double TomlSection::get_double(const std::string& key, double fallback) {
  const toml::node* node = lookup(key);
  if (node == nullptr) return fallback;
  if (!node->is_number()) type_error(key, "a number");
  const std::optional<double> v = exact_double(*node);
  if (!v) type_error(key, kExactNumber);
  if (!std::isfinite(*v)) type_error(key, "a finite number");
  return *v;
}

double TomlSection::get_double(const std::string& key, double fallback, const RealRange& range) {
  const double v = get_double(key, fallback);
  if (!range.contains(v)) {
    throw UsageError(fmt::format("{}key '{}' in {} must be a number in {} (got {})", where(key),
                                 key, name_, range.describe(), v));
  }
  return v;
}

int64_t TomlSection::get_int(const std::string& key, int64_t fallback) {
  const toml::node* node = lookup(key);
  if (node == nullptr) return fallback;
  if (!node->is_integer()) type_error(key, "an integer");
  return *node->value<int64_t>();
}

int64_t TomlSection::get_int(const std::string& key, int64_t fallback, const IntRange& range) {
  const int64_t v = get_int(key, fallback);
  if (!range.contains(v)) {
    throw UsageError(fmt::format("{}key '{}' in {} must be an integer from {} to {} (got {})",
                                 where(key), key, name_, range.min, range.max, v));
  }
  return v;
}

bool TomlSection::get_bool(const std::string& key, bool fallback) {
  const toml::node* node = lookup(key);
  if (node == nullptr) return fallback;
  if (!node->is_boolean()) type_error(key, "true or false");
  return *node->value<bool>();
}

std::vector<int64_t> TomlSection::get_int_list(const std::string& key,
                                               const std::vector<int64_t>& fallback) {
  const toml::node* node = lookup(key);
  if (node == nullptr) return fallback;
  const toml::array* array = node->as_array();
  if (array == nullptr) type_error(key, "an array of integers");
  std::vector<int64_t> out;
  for (const toml::node& item : *array) {
    if (!item.is_integer()) type_error(key, "an array of integers");
    out.push_back(*item.value<int64_t>());
  }
  return out;
}

std::vector<double> TomlSection::get_double_list(const std::string& key,
                                                 const std::vector<double>& fallback) {
  const toml::node* node = lookup(key);
  if (node == nullptr) return fallback;
  const toml::array* array = node->as_array();
  if (array == nullptr) type_error(key, "an array of numbers");
  std::vector<double> out;
  for (const toml::node& item : *array) {
    if (!item.is_number()) type_error(key, "an array of numbers");
    const std::optional<double> v = exact_double(item);
    if (!v) type_error(key, kExactNumbers);
    if (!std::isfinite(*v)) type_error(key, "an array of finite numbers");
    out.push_back(*v);
  }
  return out;
}

std::vector<std::string> TomlSection::get_string_list(const std::string& key,
                                                      const std::vector<std::string>& fallback) {
  const toml::node* node = lookup(key);
  if (node == nullptr) return fallback;
  const toml::array* array = node->as_array();
  if (array == nullptr) type_error(key, "an array of strings");
  std::vector<std::string> out;
  for (const toml::node& item : *array) {
    if (!item.is_string()) type_error(key, "an array of strings");
    out.push_back(std::string(*item.value<std::string>()));
  }
  return out;
}

std::string TomlSection::get_choice(const std::string& key, const std::string& fallback,
                                    const std::vector<std::string>& allowed) {
  std::string value = get_string(key, fallback);
  for (const std::string& a : allowed) {
    if (a == value) return value;
  }
  throw UsageError(fmt::format("{}key '{}' in {} is '{}'; allowed: {}", where(key), key, name_,
                               printable(value), fmt::join(allowed, ", ")));
}

TomlSection TomlSection::section(const std::string& key) {
  const toml::node* node = lookup(key);
  std::string sub_name =
      name_ == "top level" ? "[" + key + "]" : name_.substr(0, name_.size() - 1) + "." + key + "]";
  if (node == nullptr) return TomlSection(nullptr, file_, sub_name);
  if (!node->is_table()) type_error(key, "a table");
  return TomlSection(node->as_table(), file_, sub_name);
}

std::vector<TomlSection> TomlSection::table_list(const std::string& key) {
  std::vector<TomlSection> out;
  const toml::node* node = lookup(key);
  if (node == nullptr) return out;
  const toml::array* array = node->as_array();
  if (array == nullptr || !array->is_array_of_tables()) type_error(key, "an array of tables");
  for (size_t i = 0; i < array->size(); ++i) {
    out.emplace_back(array->get(i)->as_table(), file_, fmt::format("[[{}]] #{}", key, i + 1));
  }
  return out;
}

void TomlSection::finish() const {
  if (table_ == nullptr) return;
  for (const auto& [key, node] : *table_) {
    std::string k(key.str());
    if (known_.count(k) == 0) {
      throw UsageError(fmt::format("{}unknown key '{}' in {}; allowed: {}",
                                   node_location(file_, node), printable(k), name_,
                                   fmt::join(known_, ", ")));
    }
  }
}

std::shared_ptr<toml::table> parse_toml_file(const std::filesystem::path& path) {
  // Refuses FIFOs, devices, directories and files over 16 MiB before reading.
  const std::string text = read_file(path, kMaxWrittenTextBytes);
  try {
    return std::make_shared<toml::table>(toml::parse(text, path.string()));
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}:{}: {}", path.string(), e.source().begin.line,
                                 e.source().begin.column, printable(e.description(), 200)));
  }
}

}  // namespace normlab
