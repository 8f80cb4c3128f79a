// The claims ledger of a folder, when it has one (report_sections.hpp): OUT/claims.json as
// tables of claims and studies, OUT/claims.md as text (docs/claims.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/json_file.hpp"
#include "report/report_data.hpp"
#include "report/report_sections.hpp"

namespace normlab::report {
namespace fs = std::filesystem;
namespace {

std::string text(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

double number(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

// The findings of one paper that name a grid cell (claims.json's "grid": row and column), as
// a table: rows and columns in the order they first appear, each cell the effect [interval]
// or, where nothing was measured, the verdict.
void findings_grids(Page& page, const nlohmann::json& claims) {
  std::vector<std::string> papers;
  for (const auto& c : claims) {
    if (!c.contains("grid") || !c["grid"].is_object()) continue;
    if (std::find(papers.begin(), papers.end(), text(c, "paper")) == papers.end()) {
      papers.push_back(text(c, "paper"));
    }
  }
  for (const std::string& paper : papers) {
    std::vector<std::string> rows, columns;
    std::map<std::pair<std::string, std::string>, std::string> cells;
    for (const auto& c : claims) {
      if (!c.contains("grid") || !c["grid"].is_object() || text(c, "paper") != paper) continue;
      const std::string row = text(c["grid"], "row"), column = text(c["grid"], "column");
      if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
      if (std::find(columns.begin(), columns.end(), column) == columns.end()) {
        columns.push_back(column);
      }
      const double effect = number(c, "effect"), low = number(c, "low"), high = number(c, "high");
      cells[{row, column}] =
          text(c, "verdict") == "measured" && std::isfinite(effect)
              ? fmt::format("{} [{}, {}]", cell_text(effect), cell_text(low), cell_text(high))
              : text(c, "verdict");
    }
    std::vector<std::vector<std::string>> table;
    for (const std::string& row : rows) {
      std::vector<std::string> line = {row};
      for (const std::string& column : columns) {
        const auto it = cells.find({row, column});
        line.push_back(it == cells.end() ? "–" : it->second);
      }
      table.push_back(std::move(line));
    }
    std::vector<std::string> header = {""};
    header.insert(header.end(), columns.begin(), columns.end());
    page.heading(3, fmt::format("Findings as a grid (arXiv {})", paper));
    page.paragraph(
        "Each cell: the finding's effect [95% interval] over the pairs, or its verdict where "
        "nothing was measured (claims.json's \"grid\").");
    page.table(header, table, false);
  }
}

}  // namespace

void claims_section(Page& page, const fs::path& out) {
  const bool has_json = fs::exists(out / "claims.json"), has_md = fs::exists(out / "claims.md");
  if (!has_json && !has_md) return;
  page.heading(2, "Claims ledger");
  if (has_json) {
    const nlohmann::json ledger = parse_json_file(out / "claims.json");
    if (!ledger.is_object() || !ledger.contains("claims") || !ledger["claims"].is_array()) {
      throw InputError(
          fmt::format("{}: expected the claims.json that `normlab claims run` "
                      "writes (an object with a 'claims' array)",
                      (out / "claims.json").string()));
    }
    std::map<std::string, int> verdicts;
    std::vector<std::vector<std::string>> rows, findings;
    for (const auto& c : ledger["claims"]) {
      const double effect = number(c, "effect"), low = number(c, "low"), high = number(c, "high");
      std::vector<std::string> row = {
          text(c, "id"),
          text(c, "paper"),
          text(c, "verdict"),
          std::isfinite(effect)
              ? fmt::format("{} [{}, {}]", cell_text(effect), cell_text(low), cell_text(high))
              : "",
          text(c, "n"),
          text(c, "sentence")};
      // A finding (kind "finding", expect "measure") has no side: its own table.
      if (text(c, "kind") == "finding") {
        findings.push_back(std::move(row));
      } else {
        ++verdicts[text(c, "verdict")];
        rows.push_back(std::move(row));
      }
    }
    std::string counts;
    for (const auto& [verdict, count] : verdicts) {
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", count, verdict);
    }
    page.paragraph(fmt::format(
        "Tier {}: {} claim{}, {}. Effect: the mean over pairs (seeds) of the claim's statistic; "
        "interval: 95% Student t over the pairs (docs/claims.md). From claims.json.",
        text(ledger, "tier"), rows.size(), rows.size() == 1 ? "" : "s", counts));
    page.table({"claim", "paper", "verdict", "effect [95% interval]", "n", "sentence"}, rows,
               false);
    if (!findings.empty()) {
      page.heading(3, "Findings");
      page.paragraph(
          "Quantities the papers leave open, measured with their 95% interval over the pairs; "
          "no side is expected, so the result is measured, inconclusive (too few pairs) or "
          "untestable (design rule D1).");
      page.table({"finding", "paper", "result", "effect [95% interval]", "n", "what is measured"},
                 findings, false);
      findings_grids(page, ledger["claims"]);
    }
    // Design rule D1: where each governed claim's baseline sits at each length beyond training.
    std::vector<std::vector<std::string>> places;
    for (const auto& c : ledger["claims"]) {
      const nlohmann::json info = c.value("informativeness", nlohmann::json());
      if (!info.is_object()) continue;
      for (const auto& l : info.value("lengths", nlohmann::json::array())) {
        places.push_back({text(c, "id"), text(c, "verdict"), text(l, "length"),
                          cell_text(number(l, "baseline_mean")), cell_text(number(l, "floor")),
                          cell_text(number(l, "ceiling")), text(l, "place")});
      }
    }
    if (!places.empty()) {
      page.heading(3, "Informativeness (design rule D1)");
      page.paragraph(
          "For every claim about lengths beyond training: the baseline arm's mean m(n) at each "
          "length, the metric's floor f (chance) and ceiling c (perfect score). A length is "
          "informative when m(n) is more than 5% of |c − f| away from both; with fewer than 2 "
          "informative lengths the claim is untestable (docs/claims.md).");
      page.table({"claim", "verdict", "n", "m(n)", "f", "c", "place"}, places, false);
    }
    std::vector<std::vector<std::string>> studies;
    for (const auto& s : ledger.value("studies", nlohmann::json::array())) {
      const double seconds = number(s, "seconds");
      studies.push_back({text(s, "command"),
                         std::isfinite(seconds) ? fmt::format("{:.1f}", seconds) : "",
                         s.value("ok", false) ? "done" : "failed: " + text(s, "failure")});
    }
    if (!studies.empty()) {
      page.heading(3, "Studies of the ledger");
      page.table({"command", "wall time (s)", "status"}, studies);
    }
  }
  if (has_md)
    page.pre(read_file(out / "claims.md"), "claims.md (the ledger as written)", !has_json);
}

}  // namespace normlab::report
