#include "normlab/io/printable.hpp"

#include <fmt/format.h>

namespace normlab {

std::string printable(std::string_view text, size_t max_chars) {
  std::string out;
  size_t shown = 0;
  for (char ch : text) {
    if (shown == max_chars) return out + fmt::format("... ({} bytes)", text.size());
    const auto byte = static_cast<unsigned char>(ch);
    if (byte >= 0x20 && byte < 0x7f) {
      out.push_back(ch);
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
    ++shown;
  }
  return out;
}

std::string without_controls(std::string_view text) {
  std::string out;
  for (char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char ch : without_controls(text)) {
    if (ch == '|') out.push_back('\\');
    out.push_back(ch);
  }
  return out;
}

}  // namespace normlab
