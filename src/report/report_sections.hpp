// The sections of a report (html_report.hpp), each from the files of one kind of result.
// A section whose files are absent adds nothing; a file that is present but broken is an
// InputError naming it.
#pragma once

#include "report/study_tables.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report_page.hpp"

namespace normlab::report {

// kind = "train" folders (train_sections.cpp); `experiment` is OUT/experiment.json.
void experiment_section(Page& page, const std::filesystem::path& out,
                        const nlohmann::json& experiment);
void provenance_section(Page& page, const std::filesystem::path& out);
// The settings of a study as (setting, value) rows, the same rows for every study.
std::vector<std::vector<std::string>> experiment_settings(const nlohmann::json& experiment);
// Several studies' settings side by side, one column per study, with each one's status.
void settings_comparison_section(Page& page, const std::vector<const StudyTables*>& studies);

// Figures of one line per variant under the page's rules (study_figures.cpp): one figure per
// sweep point and panel of at most 8 schemes, titled "TITLE (QUALIFIER, POINT, schemes i–j of
// n)"; each line named and coloured by its scheme; bands only from 3 seeds; `references` gives
// each panel its reference lines from its data lines. Without a study the lines are drawn as
// given, in panels of at most 8. The caption reads "HEAD[ at POINT]: <seeds> per scheme<bands>
// TAIL."
struct FigureRules {
  const StudyTables* study = nullptr;
  const SchemeColours* colours = nullptr;
};
struct Caption {
  std::string head, tail;
};
using References = std::function<std::vector<svg::Series>(const std::vector<svg::Series>&)>;
void variant_figures(Page& page, const FigureRules& rules, const svg::Figure& frame,
                     const std::string& qualifier, const std::vector<svg::Series>& lines,
                     size_t seeds, const Caption& caption, const References& references = {});

// Figures and tables of studies (study_figures.cpp): one study, or several side by side.
// A paragraph saying the study has not finished and what the page shows of it; nothing for a
// finished study.
void running_note(Page& page, const StudyTables& study);
void metrics_section(Page& page, const std::vector<const StudyTables*>& studies,
                     const SchemeColours& colours);
// `named`: the heading names the study (a page of several).
void summary_tables_section(Page& page, const StudyTables& study, bool named);
void curves_section(Page& page, const std::vector<const StudyTables*>& studies,
                    const SchemeColours& colours);

// The probes' files: features*.csv, depth*.csv, dilution*.csv, bridge.csv (probe_sections.cpp),
// their per-scheme figures under `rules`.
void probe_sections(Page& page, const std::filesystem::path& out, const FigureRules& rules);

// kind = "particles" folders: summary.json, particles_summary.csv, <run>.csv
// (particle_sections.cpp).
void particle_sections(Page& page, const std::filesystem::path& out);

// OUT/claims.json and OUT/claims.md, when present (claims_section.cpp).
void claims_section(Page& page, const std::filesystem::path& out);

// The files at the top of the folder with their sizes (html_report.cpp).
void files_section(Page& page, const std::filesystem::path& out);

}  // namespace normlab::report
