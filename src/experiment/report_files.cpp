#include "experiment/report_files.hpp"

#include <cmath>

#include "normlab/atomic_file.hpp"
#include "normlab/checkpoint.hpp"
#include "normlab/experiment.hpp"

namespace normlab::report {
namespace fs = std::filesystem;
namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == ',') {
      out.emplace_back();
    } else {
      out.back().push_back(c);
    }
  }
  return out;
}

}  // namespace

std::vector<CsvRow> read_csv(const fs::path& file) {
  std::vector<CsvRow> rows;
  const std::string text = read_file(file);
  size_t start = 0;
  std::vector<std::string> header;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::vector<std::string> cells = split_csv_line(text.substr(start, end - start));
    start = end + 1;
    if (header.empty()) {
      header = cells;
      continue;
    }
    CsvRow row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
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
