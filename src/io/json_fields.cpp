#include "normlab/io/json_fields.hpp"

#include <fmt/format.h>

#include "normlab/base/errors.hpp"
#include "normlab/io/printable.hpp"

namespace normlab {

JsonFields::JsonFields(const nlohmann::json& j, std::string what) : j_(j), what_(std::move(what)) {
  if (!j.is_object()) throw InputError(fmt::format("{} is not a JSON object", what_));
}

bool JsonFields::has(const char* key) const {
  return j_.contains(key);
}

const nlohmann::json& JsonFields::at(const char* key) const {
  if (!j_.contains(key)) throw InputError(fmt::format("{} has no field '{}'", what_, key));
  return j_.at(key);
}

int64_t JsonFields::integer(const char* key, const IntRange& range) const {
  const int64_t min = range.min, max = range.max;
  const nlohmann::json& v = at(key);
  // Unsigned JSON integers above INT64_MAX never fit; the rest compare as int64.
  const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(max) &&
                                                 static_cast<int64_t>(v.get<uint64_t>()) >= min
                                           : v.is_number_integer() && v.get<int64_t>() >= min &&
                                                 v.get<int64_t>() <= max;
  if (!fits) {
    throw InputError(fmt::format("{} field '{}' must be an integer from {} to {} (got {})", what_,
                                 key, min, max, printable(v.dump())));
  }
  return v.get<int64_t>();
}

uint64_t JsonFields::unsigned_integer(const char* key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_number_unsigned()) {
    throw InputError(fmt::format("{} field '{}' must be an integer from 0 to {} (got {})", what_,
                                 key, UINT64_MAX, printable(v.dump())));
  }
  return v.get<uint64_t>();
}

double JsonFields::real(const char* key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_number()) {
    throw InputError(
        fmt::format("{} field '{}' must be a number (got {})", what_, key, printable(v.dump())));
  }
  return v.get<double>();
}

bool JsonFields::boolean(const char* key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_boolean()) {
    throw InputError(fmt::format("{} field '{}' must be true or false (got {})", what_, key,
                                 printable(v.dump())));
  }
  return v.get<bool>();
}

std::string JsonFields::string(const char* key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_string()) {
    throw InputError(
        fmt::format("{} field '{}' must be a string (got {})", what_, key, printable(v.dump())));
  }
  return v.get<std::string>();
}

JsonFields JsonFields::object(const char* key) const {
  return JsonFields(at(key), fmt::format("{} field '{}'", what_, key));
}

}  // namespace normlab
