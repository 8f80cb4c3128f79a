// The help text's formatter: CLI11's, except that a flag's names are shown without the values
// CLI11 appends to negated names ("--mlp,--no-mlp{false}" becomes "--mlp,--no-mlp"); each
// flag's description says its default instead.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace normlab::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    // Only flag names carry "{VALUE}" (options with values show theirs after the name).
    std::string out;
    bool in_braces = false;
    for (const char c : name) {
      if (c == '{') in_braces = true;
      if (!in_braces) out.push_back(c);
      if (c == '}') in_braces = false;
    }
    return out;
  }
};

}  // namespace normlab::cli
