#include "normlab/io/shell_quote.hpp"

namespace normlab {

std::string shell_quoted(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
                                       "OPQRSTUVWXYZ0123456789._/=+-,:@") == std::string::npos;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace normlab
