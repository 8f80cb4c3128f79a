// `normlab report OUT`: writes OUT/report.html, one self-contained HTML page with the folder's
// experiment, provenance, figures and tables (normlab/report/html_report.hpp, docs/report.md).
#include <cstdio>
#include <filesystem>

#include "commands.hpp"
#include "normlab/report/html_report.hpp"
#include "validators.hpp"

namespace normlab::cli {

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report",
      "Write OUT/report.html: the results folder's figures, tables and provenance in one "
      "self-contained HTML page (docs/report.md)");
  auto out = std::make_shared<std::string>();
  cmd->add_option("OUT", *out,
                  "Results folder: of normlab run (kind train or particles) or normlab claims run")
      ->required()
      ->check(non_empty_path());
  cmd->callback([out] {
    const std::filesystem::path file = write_html_report(*out);
    std::printf("wrote %s\n", file.string().c_str());
  });
}

}  // namespace normlab::cli
