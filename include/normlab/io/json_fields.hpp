// Exact reads of the fields of a JSON object that normlab wrote (a checkpoint's model config,
// a run's training config): no conversion between JSON types (a bool is not a number, 2.5 is
// not an integer) and integers range-checked before they are narrowed. A damaged or edited
// file fails with one line naming the object, the field and what is allowed.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "normlab/io/value_ranges.hpp"

namespace normlab {

class JsonFields {
 public:
  // `what` names the object in messages, e.g. "model config". Throws InputError unless `j`
  // is an object.
  JsonFields(const nlohmann::json& j, std::string what);

  bool has(const char* key) const;
  // Each throws InputError when the field is missing or not of exactly its type.
  const nlohmann::json& at(const char* key) const;
  int64_t integer(const char* key, const IntRange& range) const;
  uint64_t unsigned_integer(const char* key) const;
  double real(const char* key) const;  // any JSON number
  bool boolean(const char* key) const;
  std::string string(const char* key) const;
  JsonFields object(const char* key) const;

 private:
  const nlohmann::json& j_;
  std::string what_;
};

}  // namespace normlab
