// CSV as RFC 4180 writes it: a field holding a comma, a quote or a line break is quoted, its
// quotes doubled. Every CSV file normlab writes from user-named values goes through this.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace normlab {

std::string csv_field(std::string_view text);
// The fields joined by commas, with a final "\n".
std::string csv_row(const std::vector<std::string>& fields);

}  // namespace normlab
