// One train study's tables for the report (html_report.hpp): summary.csv and curves.csv when
// the study has ended; while it runs (or after it was stopped), the same tables made from what
// is there: the results store's rows of the runs that ended, and every run folder's
// metrics.jsonl so far. Several studies side by side (normlab report OUT1 OUT2 ...) share one
// colour per scheme (SchemeColours).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "normlab/io/csv.hpp"

namespace normlab::report {

struct StudyTables {
  std::filesystem::path out;
  std::string name;                 // the experiment's name, else the folder's
  nlohmann::json experiment;        // OUT/experiment.json
  std::optional<CsvTable> summary;  // summary.csv's columns
  std::optional<CsvTable> curves;   // curves.csv's columns
  // Running: the store's experiment has not finished (or summary.csv is missing); the tables
  // then hold the runs that ended and the curves so far.
  bool running = false;
  int64_t runs_ended = 0, runs_total = 0;  // total: variants × seeds of experiment.json
};

// InputError naming a file that cannot be read.
StudyTables read_study_tables(const std::filesystem::path& out, const nlohmann::json& experiment);

// A variant of a study: its scheme (base label) and its sweep point ("" without [sweep]).
struct VariantParts {
  std::string base, point;
};
// label → parts, from experiment.json's variants (base_label, and the label's rest).
std::map<std::string, VariantParts> variant_parts(const nlohmann::json& experiment);

// One palette colour per scheme (base label), in order of first appearance over the studies,
// so a scheme has the same colour in every figure of a page.
class SchemeColours {
 public:
  explicit SchemeColours(const std::vector<const StudyTables*>& studies);
  int of(const std::string& variant_label) const;  // by the variant's scheme; -1 unknown
  const std::vector<std::string>& schemes() const { return schemes_; }

 private:
  std::vector<std::string> schemes_;
  std::map<std::string, int> by_label_;
};

}  // namespace normlab::report
