#include "normlab/experiment/part_of.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace normlab {

bool runs_are_part_of(const nlohmann::json& part, const nlohmann::json& whole) {
  if (!part.is_object() || !whole.is_object()) return false;
  // The keys that choose which runs there are, or how many at a time, not what one run does.
  const std::array<std::string, 5> free = {"variants", "seeds", "sets", "jobs", "file"};
  const auto settings = [&](nlohmann::json j) {
    for (const std::string& key : free) j.erase(key);
    return j;
  };
  if (settings(part) != settings(whole)) return false;
  const nlohmann::json& variants = part.value("variants", nlohmann::json::array());
  const nlohmann::json& all = whole.value("variants", nlohmann::json::array());
  if (!variants.is_array() || !all.is_array() || variants.empty()) return false;
  return std::all_of(variants.begin(), variants.end(), [&](const nlohmann::json& v) {
    return std::find(all.begin(), all.end(), v) != all.end();
  });
}

}  // namespace normlab
