// Reading probe files back and appending to summary.md, shared by the study reports
// (depth_report.cpp, features_report.cpp, dilution_report.cpp).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace normlab::report {

using CsvRow = std::map<std::string, std::string>;

// Rows of a CSV file (no quoting) as maps from the header's column names.
std::vector<CsvRow> read_csv(const std::filesystem::path& file);

// The cell as a number; NaN when absent, empty or not a number.
double number(const CsvRow& row, const std::string& key);

// The cell, or "" when absent.
std::string cell(const CsvRow& row, const std::string& key);

// Appends `markdown` to OUT/summary.md (written just before by collect_results), atomically.
void append_summary(const std::filesystem::path& out, const std::string& markdown);

}  // namespace normlab::report
