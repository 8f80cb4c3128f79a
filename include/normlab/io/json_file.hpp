// JSON files normlab wrote (run.json, experiment.json, state.json, eval_*.json, claims.json):
// read whole, and every failure of their reading — a syntax error, a missing key, a value of
// another type — said in one line of normlab's own that names the file, never the JSON
// library's text. Such a file is damaged, edited, or from another version of normlab.
#pragma once

#include <filesystem>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace normlab {

// The parsed file; an InputError naming it when it is not JSON (or too large: read_file).
nlohmann::json parse_json_file(const std::filesystem::path& file);

// Why nlohmann's parse refused a text, for a message: "syntax error at byte N" for a parse_error,
// and for a number literal beyond a double ("1e999", valid JSON that nlohmann refuses with
// out_of_range 406, not parse_error) "number overflow parsing '1e999'". A parse throws only
// these two, so its caller catches nlohmann::json::exception and names the problem with this.
std::string json_parse_problem(const nlohmann::json::exception& e);

// The InputError for `e`, met while reading `file`: "FILE: not as normlab writes it (REASON)".
[[noreturn]] void throw_json_file_error(const std::filesystem::path& file,
                                        const nlohmann::json::exception& e);

// What `read` makes of the parsed file; a JSON exception `read` throws (a key not found, a value
// of another type) becomes throw_json_file_error's InputError.
template <class Read>
auto read_json_file(const std::filesystem::path& file, Read&& read) {
  const nlohmann::json j = parse_json_file(file);
  try {
    return std::forward<Read>(read)(j);
  } catch (const nlohmann::json::exception& e) {
    throw_json_file_error(file, e);
  }
}

}  // namespace normlab
