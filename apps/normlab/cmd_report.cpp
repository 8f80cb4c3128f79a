// `normlab report OUT`: writes OUT/report.html, one self-contained HTML page with the folder's
// experiment, provenance, figures and tables (normlab/report/html_report.hpp, docs/report.md).
// `normlab report OUT1 OUT2 ... --to FILE`: the studies side by side in one page.
#include <cstdio>
#include <filesystem>
#include <vector>

#include "commands.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/report/html_report.hpp"
#include "validators.hpp"

namespace normlab::cli {

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report",
      "Write OUT/report.html: the results folder's figures, tables and provenance in one "
      "self-contained HTML page; with several folders, one page with the studies side by side "
      "(docs/report.md)");
  struct Options {
    std::vector<std::string> outs;
    std::string to;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("OUT", o->outs,
                  "Results folder: of normlab run (kind train or particles) or normlab claims "
                  "run; several kind train folders to compare them")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--to", o->to,
                  "Write the page here (default OUT/report.html; needed with several folders)")
      ->check(non_empty_path());
  cmd->callback([o] {
    if (o->outs.size() == 1) {
      const std::filesystem::path file =
          o->to.empty() ? write_html_report(o->outs[0]) : std::filesystem::path(o->to);
      if (!o->to.empty()) write_file_atomic(file, html_report(o->outs[0]));
      std::printf("wrote %s\n", file.string().c_str());
      return;
    }
    if (o->to.empty()) {
      throw CLI::ValidationError("--to",
                                 "give the page's file: several folders have no OUT of "
                                 "their own (e.g. --to compare.html)");
    }
    std::vector<std::filesystem::path> outs(o->outs.begin(), o->outs.end());
    write_file_atomic(o->to, html_comparison(outs));
    std::printf("wrote %s\n", o->to.c_str());
  });
}

}  // namespace normlab::cli
