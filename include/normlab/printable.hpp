// Text taken from a user's file or command line, made safe to quote in a one-line message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace normlab {

// `text` with control and non-ASCII bytes written as \xNN, cut after `max_chars` characters
// with "... (N bytes)" appended, so a message quoting it stays one readable line.
std::string printable(std::string_view text, size_t max_chars = 60);

}  // namespace normlab
