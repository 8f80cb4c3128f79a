// The sections of a report (html_report.hpp), each from the files of one kind of result.
// A section whose files are absent adds nothing; a file that is present but broken is an
// InputError naming it.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "report/report_page.hpp"

namespace normlab::report {

// kind = "train" folders (train_sections.cpp); `experiment` is OUT/experiment.json.
void experiment_section(Page& page, const std::filesystem::path& out,
                        const nlohmann::json& experiment);
void provenance_section(Page& page, const std::filesystem::path& out);
void metrics_section(Page& page, const std::filesystem::path& out,
                     const nlohmann::json& experiment);
void summary_tables_section(Page& page, const std::filesystem::path& out,
                            const nlohmann::json& experiment);
void curves_section(Page& page, const std::filesystem::path& out);

// The probes' files: features*.csv, depth*.csv, dilution*.csv, bridge.csv (probe_sections.cpp).
void probe_sections(Page& page, const std::filesystem::path& out);

// kind = "particles" folders: summary.json, particles_summary.csv, <run>.csv
// (particle_sections.cpp).
void particle_sections(Page& page, const std::filesystem::path& out);

// OUT/claims.json and OUT/claims.md, when present (claims_section.cpp).
void claims_section(Page& page, const std::filesystem::path& out);

// The files at the top of the folder with their sizes (html_report.cpp).
void files_section(Page& page, const std::filesystem::path& out);

}  // namespace normlab::report
