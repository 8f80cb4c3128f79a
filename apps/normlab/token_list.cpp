#include "token_list.hpp"

#include <fmt/format.h>

#include <charconv>

#include "normlab/base/errors.hpp"
#include "normlab/io/printable.hpp"

namespace normlab::cli {

std::vector<int32_t> parse_token_list(const std::string& text, const std::string& option,
                                      const std::string& item_name) {
  std::vector<int32_t> tokens;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == ',' || text[i] == '\t' || text[i] == '\n') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != ',' && text[j] != '\t' &&
           text[j] != '\n') {
      ++j;
    }
    const std::string item = text.substr(i, j - i);
    int32_t value = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || ptr != item.data() + item.size() || value < 0) {
      throw UsageError(fmt::format("{}: '{}' is not a {} (a non-negative integer)", option,
                                   printable(item), item_name));
    }
    tokens.push_back(value);
    i = j;
  }
  if (tokens.empty()) throw UsageError(fmt::format("{}: no {}s given", option, item_name));
  return tokens;
}

}  // namespace normlab::cli
