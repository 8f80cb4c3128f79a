// Parsing "3 1 4 1 5" (spaces or commas) into token ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace normlab::cli {

// Throws UsageError naming the first item that is not a non-negative integer.
std::vector<int32_t> parse_token_list(const std::string& text);

}  // namespace normlab::cli
