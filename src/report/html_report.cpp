// Assembling a results folder's report.html (normlab/report/html_report.hpp) from the sections of
// report_sections.hpp.
#include "normlab/report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/json_file.hpp"
#include "normlab/store/provenance.hpp"
#include "report/report_data.hpp"
#include "report/report_sections.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace report {

void files_section(Page& page, const fs::path& out) {
  std::vector<std::vector<std::string>> rows;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(out, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "report.html" || name.find(".tmp.") != std::string::npos) continue;
    if (entry.is_directory(ec)) {
      size_t count = 0;
      for (auto it = fs::directory_iterator(entry.path(), ec);
           !ec && it != fs::directory_iterator(); it.increment(ec)) {
        ++count;
      }
      rows.push_back({name + "/", fmt::format("folder, {} entries", count)});
    } else if (entry.is_regular_file(ec)) {
      const auto bytes = entry.file_size(ec);
      rows.push_back({name, ec ? "" : fmt::format("{:.1f} KB", static_cast<double>(bytes) / 1024)});
    }
  }
  std::sort(rows.begin(), rows.end());
  page.heading(2, "Files");
  page.paragraph(
      "The folder's files (docs/experiments.md, docs/particles.md and docs/store.md "
      "say what each holds); this page was made from them.");
  page.table({"file", "size"}, rows, false);
}

}  // namespace report

namespace {

const char* kind_name(ResultsKind k) {
  switch (k) {
    case ResultsKind::train:
      return "train";
    case ResultsKind::particles:
      return "particles";
    case ResultsKind::claims:
      return "claims ledger";
  }
  return "";
}

// The folder's own name, also for "results/x/" and ".".
std::string folder_name(const fs::path& out) {
  fs::path p = fs::absolute(out).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

nlohmann::json train_experiment(const fs::path& out) {
  const fs::path file = out / "experiment.json";
  nlohmann::json e = parse_json_file(file);
  if (!e.is_object() || !e.contains("variants") || !e["variants"].is_array() ||
      !e.contains("train") || !e["train"].is_object()) {
    throw InputError(
        fmt::format("{}: not the experiment.json of a kind = \"train\" experiment "
                    "(no 'variants' list or 'train' table)",
                    file.string()));
  }
  return e;
}

}  // namespace

ResultsKind results_kind(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) {
    throw InputError(fmt::format("{}: no such folder", out.string()));
  }
  if (!fs::is_directory(out, ec)) {
    throw UsageError(
        fmt::format("{}: not a folder; normlab report takes a results folder "
                    "(written by normlab run or normlab claims run)",
                    out.string()));
  }
  if (fs::exists(out / "experiment.json")) return ResultsKind::train;
  if (fs::exists(out / "particles_summary.csv") && fs::exists(out / "summary.json")) {
    return ResultsKind::particles;
  }
  if (fs::exists(out / "claims.json") || fs::exists(out / "claims.md")) return ResultsKind::claims;
  throw InputError(fmt::format(
      "{}: not a results folder: it has no experiment.json (normlab run, kind \"train\"), no "
      "particles_summary.csv with summary.json (kind \"particles\") and no claims.json "
      "(normlab claims run)",
      out.string()));
}

namespace {

std::string page_of(const fs::path& out, ResultsKind kind) {
  report::Page page;
  std::string title;
  switch (kind) {
    case ResultsKind::train: {
      const nlohmann::json e = train_experiment(out);
      title = "normlab report: " + (e.contains("name") && e["name"].is_string()
                                        ? e["name"].get<std::string>()
                                        : folder_name(out));
      const report::StudyTables study = report::read_study_tables(out, e);
      const report::SchemeColours colours({&study});
      report::running_note(page, study);
      report::experiment_section(page, out, e);
      report::provenance_section(page, out);
      report::metrics_section(page, {&study}, colours);
      report::summary_tables_section(page, study, false);
      report::curves_section(page, {&study}, colours);
      report::probe_sections(page, out, {&study, &colours});
      report::claims_section(page, out);
      break;
    }
    case ResultsKind::particles:
      title = "normlab report: particles, " + folder_name(out);
      report::particle_sections(page, out);
      report::claims_section(page, out);
      break;
    case ResultsKind::claims:
      title = "normlab report: claims ledger";
      report::claims_section(page, out);
      break;
  }
  report::files_section(page, out);
  const std::string commit = build_git_commit();
  const std::string subtitle = fmt::format(
      "Results folder {} (kind {}). This page: written {} by normlab {}{} (normlab report "
      "FOLDER writes it again; docs/report.md).",
      out.string(), kind_name(kind), utc_now(), normlab_version(),
      commit.empty() ? "" : " (commit " + commit + ")");
  return page.document(title, subtitle);
}

}  // namespace

std::string html_report(const fs::path& out) {
  const ResultsKind kind = results_kind(out);
  try {
    return page_of(out, kind);
  } catch (const nlohmann::json::exception& e) {
    // A JSON file of the folder parsed but holds a value of an unexpected type.
    throw InputError(fmt::format("{}: a JSON file of this folder has unexpected content: {}",
                                 out.string(), e.what()));
  }
}

std::string html_comparison(const std::vector<fs::path>& outs) {
  std::vector<report::StudyTables> studies;
  for (const fs::path& out : outs) {
    if (results_kind(out) != ResultsKind::train) {
      throw UsageError(fmt::format(
          "{}: not a folder of normlab run with kind = \"train\"; only those can be compared",
          out.string()));
    }
    try {
      studies.push_back(report::read_study_tables(out, train_experiment(out)));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: a JSON file of this folder has unexpected content: {}",
                                   out.string(), e.what()));
    }
  }
  std::vector<const report::StudyTables*> all;
  std::string names;
  for (const report::StudyTables& s : studies) {
    all.push_back(&s);
    names += (names.empty() ? "" : ", ") + s.name;
  }
  const report::SchemeColours colours(all);
  report::Page page;
  for (const report::StudyTables& s : studies) report::running_note(page, s);
  report::settings_comparison_section(page, all);
  report::metrics_section(page, all, colours);
  report::curves_section(page, all, colours);
  for (const report::StudyTables& s : studies) report::summary_tables_section(page, s, true);
  const std::string commit = build_git_commit();
  std::string folders;
  for (const fs::path& out : outs) folders += (folders.empty() ? "" : ", ") + out.string();
  return page.document(
      "normlab report: " + names,
      fmt::format("Results folders {} side by side. This page: written {} by normlab {}{} "
                  "(normlab report FOLDER... --to FILE writes it again; docs/report.md).",
                  folders, utc_now(), normlab_version(),
                  commit.empty() ? "" : " (commit " + commit + ")"));
}

fs::path write_html_report(const fs::path& out) {
  const std::string html = html_report(out);
  const fs::path file = out / "report.html";
  write_file_atomic(file, html);
  return file;
}

std::string report_line_after_run(const fs::path& out) {
  try {
    return "report: " + write_html_report(out).string();
  } catch (const std::exception& e) {
    return fmt::format("report: not written ({})", e.what());
  }
}

}  // namespace normlab
