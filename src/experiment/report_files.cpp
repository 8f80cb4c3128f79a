#include "experiment/report_files.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "normlab/base/errors.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/model/checkpoint.hpp"

namespace normlab::report {
namespace fs = std::filesystem;

std::vector<CsvRow> read_csv(const fs::path& file) {
  const CsvTable table = read_csv_table(file);
  std::vector<CsvRow> rows;
  for (const std::vector<std::string>& cells : table.rows) {
    CsvRow row;
    for (size_t i = 0; i < cells.size(); ++i) row[table.columns[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

double number(const CsvRow& row, const std::string& key) {
  auto it = row.find(key);
  if (it == row.end() || it->second.empty()) return NAN;
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    return NAN;
  }
}

int64_t integer(const CsvRow& row, const std::string& key, const fs::path& file) {
  const std::string text = cell(row, key);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw InputError(fmt::format("{}: column '{}' holds '{}', not an integer", file.string(), key,
                                 printable(text)));
  }
  return value;
}

std::string cell(const CsvRow& row, const std::string& key) {
  auto it = row.find(key);
  return it == row.end() ? std::string() : it->second;
}

void append_summary(const fs::path& out, const std::string& markdown) {
  const fs::path summary = out / "summary.md";
  write_file_atomic(summary, (fs::exists(summary) ? read_file(summary) : std::string()) + markdown);
}

std::string markdown_figures(const fs::path& out,
                             const std::vector<std::pair<std::string, std::string>>& figures) {
  std::string md;
  for (const auto& [file, alt] : figures) {
    if (fs::exists(out / file)) md += "\n![" + alt + "](" + file + ")\n";
  }
  return md;
}

std::unique_ptr<Model<float>> load_final_model(const Variant& v, const std::filesystem::path& run) {
  LoadedParams loaded = load_param_file(run / "final" / kModelFile, &v.model);
  auto model = std::make_unique<Model<float>>(loaded.config);
  model->params() = std::move(loaded.values);
  return model;
}

}  // namespace normlab::report
