// `normlab results OUT [--sql QUERY] [--csv|--json]`: what a results folder's store holds
// (docs/store.md): its experiments with provenance, its runs by status, and the mean of every
// metric across seeds at each length; or the rows of any read-only SQL query.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "normlab/store/results_store.hpp"
#include "query_table.hpp"
#include "validators.hpp"

namespace normlab::cli {
namespace fs = std::filesystem;

namespace {

struct ResultsOptions {
  std::string out, sql;
  bool csv = false, json = false;
  double seconds = kQuerySeconds;
};

void print_summary(const fs::path& db) {
  const QueryTable experiments = query_results_store(
      db,
      "SELECT name, config_hash, version, git_commit, host, started_at, finished_at FROM "
      "experiments ORDER BY id");
  for (const auto& e : experiments.rows) {
    std::printf("experiment %s (config %s): normlab %s%s on %s, %s to %s\n", e[0].c_str(),
                e[1].c_str(), e[2].c_str(), e[3].empty() ? "" : (" commit " + e[3]).c_str(),
                e[4].c_str(), e[5].c_str(), e[6].empty() ? "(not finished)" : e[6].c_str());
  }
  const QueryTable runs = query_results_store(
      db, "SELECT status, COUNT(*) AS runs FROM runs GROUP BY status ORDER BY status");
  std::string counts;
  for (const auto& r : runs.rows)
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", r[1], r[0]);
  std::printf("runs: %s\n\n", counts.empty() ? "none" : counts.c_str());
  const QueryTable means = query_results_store(
      db,
      "SELECT metric, variant, weights, length, printf('%.4f', AVG(value)) AS mean, COUNT(value) "
      "AS seeds FROM results GROUP BY metric, variant, weights, length ORDER BY metric, variant, "
      "weights, length");
  std::printf("%s", format_text_table(means).c_str());
}

}  // namespace

void add_results_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "results", "Summarize a results folder's store, or run an SQL query on it (docs/store.md)");
  auto o = std::make_shared<ResultsOptions>();
  cmd->add_option("OUT", o->out, "Results folder (holding results.sqlite)")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--sql", o->sql,
                  "A read-only query, e.g. \"SELECT variant, AVG(value) FROM results WHERE "
                  "metric = 'tvd' GROUP BY variant\"");
  cmd->add_option("--seconds", o->seconds,
                  "Stop the query after this many seconds (default 60); it may return at most "
                  "10^6 rows")
      ->check(real_in(RealRange{0, 86400, false, true}));
  auto* csv = cmd->add_flag("--csv", o->csv, "Print the query's rows as CSV");
  cmd->add_flag("--json", o->json, "Print the query's rows as JSON")->excludes(csv);
  cmd->callback([o] {
    const fs::path db = fs::path(o->out) / "results.sqlite";
    if (o->sql.empty()) {
      if (o->csv || o->json) throw CLI::ValidationError("--csv/--json", "need --sql QUERY");
      print_summary(db);
      return;
    }
    const QueryTable t = query_results_store(db, o->sql, {kMaxQueryRows, o->seconds});
    const std::string text = o->csv    ? format_csv_table(t)
                             : o->json ? format_json_table(t)
                                       : format_text_table(t);
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
}

}  // namespace normlab::cli
