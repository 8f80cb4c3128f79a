// Reading probe files back and appending to summary.md, shared by the study reports
// (depth_report.cpp, features_report.cpp, dilution_report.cpp, bridge_report.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "normlab/model/model.hpp"

namespace normlab {
struct Variant;
}

namespace normlab::report {

using CsvRow = std::map<std::string, std::string>;

// Rows of a CSV file (csv.hpp's reader) as maps from the header's column names.
std::vector<CsvRow> read_csv(const std::filesystem::path& file);

// The cell as a number; NaN when absent, empty or not a number.
double number(const CsvRow& row, const std::string& key);

// The cell as an integer; InputError naming `file` when it is absent or not an integer.
int64_t integer(const CsvRow& row, const std::string& key, const std::filesystem::path& file);

// The cell, or "" when absent.
std::string cell(const CsvRow& row, const std::string& key);

// The final raw weights of a finished run of variant `v` (RUN/final), checked against the
// variant's model config: what every probe of a study's runs starts from.
std::unique_ptr<Model<float>> load_final_model(const Variant& v, const std::filesystem::path& run);

// Appends `markdown` to OUT/summary.md (written just before by collect_results), atomically.
void append_summary(const std::filesystem::path& out, const std::string& markdown);

// Markdown images of the figures that exist in OUT, relative to it: "![alt](file.png)" per
// (file, alt); "" when none exists.
std::string markdown_figures(const std::filesystem::path& out,
                             const std::vector<std::pair<std::string, std::string>>& figures);

}  // namespace normlab::report
