// `normlab export OUT --csv|--json [--table T] [--to FILE]`: one table of a results folder's
// store, whole, as CSV (RFC 4180 quoting) or JSON (docs/store.md).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/store/results_store.hpp"
#include "query_table.hpp"
#include "validators.hpp"

namespace normlab::cli {
namespace fs = std::filesystem;

void add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "export", "Write one table of a results folder's store as CSV or JSON (docs/store.md)");
  struct Options {
    std::string out, table = "tidy", to;
    bool csv = false, json = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("OUT", o->out, "Results folder (holding results.sqlite)")
      ->required()
      ->check(non_empty_path());
  auto* csv = cmd->add_flag("--csv", o->csv, "CSV");
  auto* json = cmd->add_flag("--json", o->json, "JSON: an array of objects");
  csv->excludes(json);
  cmd->add_option("--table", o->table,
                  "Which table; tidy is results with each run's settings and sweep values as "
                  "columns, tidy_runs the same for runs")
      ->check(CLI::IsMember(
          {"tidy", "tidy_runs", "experiments", "runs", "results", "curves", "probes"}))
      ->capture_default_str();
  cmd->add_option("--to", o->to, "Output file (default: standard output)")->check(non_empty_path());
  cmd->callback([o] {
    if (!o->csv && !o->json) throw CLI::ValidationError("--csv/--json", "give one of them");
    // The table name is one of the seven above, so it can be spliced into the query.
    const QueryTable t = query_results_store(fs::path(o->out) / "results.sqlite",
                                             fmt::format("SELECT * FROM {}", o->table));
    const std::string text = o->csv ? format_csv_table(t) : format_json_table(t);
    if (o->to.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      write_file_atomic(o->to, text);
      std::fprintf(stderr, "wrote %s (%zu rows)\n", o->to.c_str(), t.rows.size());
    }
  });
}

}  // namespace normlab::cli
