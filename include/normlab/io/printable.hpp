// Text taken from a user's file or command line, made safe to quote in a one-line message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace normlab {

// `text` with control and non-ASCII bytes written as \xNN, cut after `max_chars` characters
// with "... (N bytes)" appended, so a message quoting it stays one readable line.
std::string printable(std::string_view text, size_t max_chars = 60);

// `text` whole, with only its control bytes (ESC of terminal escapes, newlines, tabs, DEL)
// written as \xNN: for listing text from files (a ledger's sentences, which may be UTF-8) on a
// terminal without letting it move the cursor or change colours.
std::string without_controls(std::string_view text);

// `text` as one cell of a Markdown table row: without_controls (a line break would end the
// row) and each '|' escaped as "\|" (it would start a new column). Every Markdown table
// normlab writes passes user-named text (labels, ids, commands) through this.
std::string markdown_cell(std::string_view text);

}  // namespace normlab
