// Printing a query's rows (normlab/store/results_store.hpp) as an aligned text table, CSV or JSON.
#pragma once

#include <string>

#include "normlab/store/results_store.hpp"

namespace normlab::cli {

std::string format_text_table(const QueryTable& t);
std::string format_csv_table(const QueryTable& t);
// A JSON array of objects; cells that read as numbers are numbers, empty cells null; text that
// is not UTF-8 (the store holds any bytes) has each invalid byte replaced with U+FFFD.
std::string format_json_table(const QueryTable& t);

}  // namespace normlab::cli
