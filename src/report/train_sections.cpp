// The sections of a kind = "train" results folder that describe it: the experiment and its
// provenance, and the settings of several studies side by side (report_sections.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/store/results_store.hpp"
#include "normlab/tasks/metrics.hpp"
#include "report/report_data.hpp"
#include "report/report_sections.hpp"

namespace normlab::report {
namespace fs = std::filesystem;
namespace {

std::string text_of(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_null()) return "";
  return j.dump();
}

std::string joined(const nlohmann::json& list) {
  std::string s;
  if (!list.is_array()) return text_of(list);
  for (const auto& item : list) s += (s.empty() ? "" : ", ") + text_of(item);
  return s;
}

}  // namespace

std::vector<std::vector<std::string>> experiment_settings(const nlohmann::json& e) {
  std::vector<std::vector<std::string>> rows;
  const auto add = [&](const std::string& key, const std::string& value) {
    rows.push_back({key, value});
  };
  std::vector<std::string> labels;
  for (const auto& v : e.value("variants", nlohmann::json::array())) {
    labels.push_back(v.value("label", ""));
  }
  const nlohmann::json train = e.value("train", nlohmann::json::object());
  const nlohmann::json eval = e.value("eval", nlohmann::json::object());
  const auto [min_len, max_len] = training_lengths(e);
  add("name", text_of(e.value("name", nlohmann::json())));
  add("experiment file", text_of(e.value("file", nlohmann::json())));
  add("tier", text_of(e.value("tier", nlohmann::json())));
  add("--set", joined(e.value("sets", nlohmann::json::array())));
  add("task", e.contains("task") ? e["task"].dump() : "");
  add("schemes (variants)", fmt::format("{}", fmt::join(labels, ", ")));
  add("seeds", joined(e.value("seeds", nlohmann::json::array())));
  add("training steps", text_of(train.value("steps", nlohmann::json())));
  add("training lengths",
      std::isfinite(min_len) ? fmt::format("{:g} .. {:g}", min_len, max_len) : "");
  add("schedule", text_of(train.value("schedule", nlohmann::json())));
  add("peak learning rate", text_of(train.value("lr", nlohmann::json())));
  add("evaluation lengths", joined(eval.value("lengths", nlohmann::json::array())));
  add("evaluation samples per length", text_of(eval.value("samples", nlohmann::json())));
  add("weights", joined(eval.value("weights", nlohmann::json::array())));
  std::vector<std::string> probes;
  for (const char* p : {"depth", "variance", "dilution", "bridge"}) {
    const nlohmann::json probe = e.value("probe", nlohmann::json::object());
    if (probe.value(p, false)) probes.push_back(p);
  }
  add("probes", fmt::format("{}", fmt::join(probes, ", ")));
  return rows;
}

void experiment_section(Page& page, const fs::path& out, const nlohmann::json& e) {
  page.heading(2, "Experiment");
  std::vector<std::vector<std::string>> rows;
  for (auto& row : experiment_settings(e)) {
    if (!row[1].empty()) rows.push_back(std::move(row));
  }
  page.table({"setting", "value"}, rows, false);
  if (fs::exists(out / "experiment.toml")) {
    page.pre(read_file(out / "experiment.toml"), "experiment.toml (the file as run)", true);
  }
  page.pre(e.dump(2), "experiment.json (the resolved experiment, every default filled in)");
}

void settings_comparison_section(Page& page, const std::vector<const StudyTables*>& studies) {
  page.heading(2, "Studies");
  page.paragraph(
      "Each study's settings, one column per results folder; a row whose values differ is "
      "marked *.");
  std::vector<std::string> header = {"setting"};
  std::vector<std::vector<std::vector<std::string>>> columns;
  for (const StudyTables* s : studies) {
    header.push_back(s->out.string());
    columns.push_back(experiment_settings(s->experiment));
  }
  std::vector<std::vector<std::string>> rows;
  for (size_t r = 0; r < columns.front().size(); ++r) {
    std::vector<std::string> row = {columns.front()[r][0]};
    bool differ = false;
    for (const auto& c : columns) {
      row.push_back(c[r][1]);
      differ = differ || c[r][1] != columns.front()[r][1];
    }
    if (differ) row[0] += " *";
    rows.push_back(std::move(row));
  }
  std::vector<std::string> status = {"status"};
  for (const StudyTables* s : studies) {
    status.push_back(
        s->running ? fmt::format("not finished: {} of {} runs ended", s->runs_ended, s->runs_total)
                   : "finished");
  }
  rows.push_back(std::move(status));
  page.table(header, rows, false);
}

void provenance_section(Page& page, const fs::path& out) {
  page.heading(2, "Provenance");
  const fs::path db = out / "results.sqlite";
  if (!fs::exists(db)) {
    page.paragraph(
        "This folder has no results.sqlite (it was written by a normlab older than the results "
        "store, docs/store.md), so the version, commit, host and times are not known.");
    return;
  }
  try {
    const QueryTable e = query_results_store(
        db,
        "SELECT name, config_hash, version, git_commit, host, started_at, finished_at FROM "
        "experiments ORDER BY id");
    page.paragraph(
        "From results.sqlite (docs/store.md): the normlab that ran the experiment, "
        "the commit it was built from (+dirty: with uncommitted changes), the host "
        "and the times (UTC).");
    std::vector<std::vector<std::string>> rows = e.rows;
    for (auto& r : rows) {
      if (r[3].empty()) r[3] = "(not recorded)";
      if (r[6].empty()) r[6] = "(not finished)";
    }
    page.table({"experiment", "config hash", "normlab version", "git commit", "host", "started",
                "finished"},
               rows, false);
    const QueryTable runs = query_results_store(
        db,
        "SELECT variant, seed, status, CASE WHEN seconds IS NULL THEN '' ELSE printf('%.1f', "
        "seconds) END, started_at, finished_at, "
        "run_dir, hash FROM runs ORDER BY variant, seed");
    page.heading(3, "Runs");
    page.table(
        {"variant", "seed", "status", "seconds", "started", "finished", "run folder", "run hash"},
        runs.rows);
  } catch (const InputError& err) {
    const std::string why = err.what();
    page.paragraph(why.find("no such table") != std::string::npos
                       ? "results.sqlite has the layout of a normlab older than the provenance "
                         "tables (docs/store.md), so the version, commit, host and times are not "
                         "known; running the experiment again (its finished runs are kept) "
                         "rebuilds the store."
                       : "results.sqlite could not be read: " + why);
  }
}

}  // namespace normlab::report
