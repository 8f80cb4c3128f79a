// Parsing "3 1 4 1 5" (spaces or commas) into token ids or positions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace normlab::cli {

// Throws UsageError naming the option and the first item that is not a non-negative integer, or
// saying that the list is empty.
std::vector<int32_t> parse_token_list(const std::string& text,
                                      const std::string& option = "--tokens",
                                      const std::string& item_name = "token id");

}  // namespace normlab::cli
