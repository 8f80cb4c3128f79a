// Printing a query's rows (normlab/results_store.hpp) as an aligned text table, CSV or JSON.
#pragma once

#include <string>

#include "normlab/results_store.hpp"

namespace normlab::cli {

std::string format_text_table(const QueryTable& t);
std::string format_csv_table(const QueryTable& t);
// A JSON array of objects; cells that read as numbers are numbers, empty cells null.
std::string format_json_table(const QueryTable& t);

}  // namespace normlab::cli
