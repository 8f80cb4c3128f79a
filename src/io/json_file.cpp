#include "normlab/io/json_file.hpp"

#include <fmt/format.h>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/printable.hpp"

namespace normlab {

namespace {

// nlohmann's what() begins "[json.exception.type_error.302] "; the rest says what was wrong
// ("type must be number, but is string", "key 'step' not found").
std::string reason(const nlohmann::json::exception& e) {
  std::string text = e.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    if (const size_t end = text.find("] "); end != std::string::npos) text.erase(0, end + 2);
  }
  return printable(text, 200);
}

}  // namespace

std::string json_parse_problem(const nlohmann::json::exception& e) {
  if (const auto* syntax = dynamic_cast<const nlohmann::json::parse_error*>(&e)) {
    return fmt::format("syntax error at byte {}", syntax->byte);
  }
  return reason(e);
}

nlohmann::json parse_json_file(const std::filesystem::path& file) {
  const std::string text = read_file(file);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(
        fmt::format("{}: not valid JSON ({}); a damaged file, or not one normlab wrote",
                    file.string(), json_parse_problem(e)));
  }
}

void throw_json_file_error(const std::filesystem::path& file, const nlohmann::json::exception& e) {
  throw InputError(
      fmt::format("{}: not as normlab writes it ({}); a damaged or edited file, or "
                  "one from another version of normlab",
                  file.string(), reason(e)));
}

}  // namespace normlab
