// A model config written on one line, as the tests declare their cases:
//   config_line("scheme=deepnorm norm=layernorm layers=3", base)
// Each word is key=value with a model field's TOML key (model_fields.hpp: "pos", "heads",
// "scaled_init", …) and its text as an experiment file writes it (words, numbers, true/false);
// values hold no spaces. The words are applied over `base` in order, through the field list, so
// a case line reads every field the experiment files and the command line read. An unknown key
// or a malformed value throws std::invalid_argument naming it; ranges are left to the Model's
// validation.
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "normlab/model/model_fields.hpp"

namespace normlab::testing {

inline ModelConfig config_line(const std::string& line, ModelConfig base) {
  size_t at = 0;
  while (true) {
    while (at < line.size() && std::isspace(static_cast<unsigned char>(line[at]))) ++at;
    if (at == line.size()) break;
    const size_t eq = line.find('=', at);
    const size_t space = line.find(' ', at);
    if (eq == std::string::npos || eq == at || (space != std::string::npos && space < eq)) {
      throw std::invalid_argument("config_line: '" + line.substr(at, space - at) +
                                  "' is not key=value");
    }
    const std::string key = line.substr(at, eq - at);
    std::string text;
    if (eq + 1 < line.size() && line[eq + 1] == '"') {
      const size_t close = line.find('"', eq + 2);
      if (close == std::string::npos) {
        throw std::invalid_argument("config_line: no closing quote after '" + key + "='");
      }
      text = line.substr(eq + 2, close - eq - 2);
      at = close + 1;
    } else {
      const size_t end = line.find(' ', eq + 1);
      text = line.substr(eq + 1, end == std::string::npos ? std::string::npos : end - eq - 1);
      at = end == std::string::npos ? line.size() : end;
    }
    const std::string word = key + "=" + text;
    bool found = false;
    auto bad = [&] { return std::invalid_argument("config_line: bad value in '" + word + "'"); };
    visit_model_fields(base, [&](const FieldInfo& info, auto& value, auto... /*range*/) {
      if (key != info.toml_key()) return;
      found = true;
      using V = std::remove_cvref_t<decltype(value)>;
      if constexpr (std::is_same_v<V, bool>) {
        if (text != "true" && text != "false") throw bad();
        value = text == "true";
      } else if constexpr (std::is_same_v<V, int>) {
        char* end = nullptr;
        errno = 0;
        const long n = std::strtol(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || errno != 0 || n != static_cast<int>(n)) throw bad();
        value = static_cast<int>(n);
      } else if constexpr (std::is_same_v<V, double>) {
        char* end = nullptr;
        errno = 0;
        const double x = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || errno != 0) throw bad();
        value = x;
      } else {
        parse_field(text, value);
      }
    });
    if (!found) throw std::invalid_argument("config_line: no model field '" + key + "'");
  }
  return base;
}

}  // namespace normlab::testing
