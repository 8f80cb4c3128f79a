// `normlab run FILE.toml [--out DIR]`: runs the study an experiment file describes. The
// top-level key `kind` selects the subsystem; each kind reads the rest of the file itself.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "normlab/errors.hpp"
#include "normlab/particles/study.hpp"
#include "normlab/toml_reader.hpp"

namespace normlab::cli {

namespace {

struct RunOptions {
  std::string file;
  std::string out;
};

void run(const RunOptions& o) {
  const std::filesystem::path path(o.file);
  auto table = parse_toml_file(path);
  TomlSection top(table.get(), path.string(), "top level");
  const std::vector<std::string> kinds{"particles"};
  if (!top.has("kind")) {
    throw UsageError(fmt::format("{}: missing top-level key 'kind'; allowed: {}", path.string(),
                                 fmt::join(kinds, ", ")));
  }
  const std::string kind = top.get_choice("kind", "", kinds);
  const std::filesystem::path out =
      o.out.empty() ? std::filesystem::path("results") / path.stem() : std::filesystem::path(o.out);
  if (kind == "particles") {
    particles::run_study(top, out);
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run the study described by an experiment file (TOML)");
  cmd->add_option("file", o->file, "experiment file (TOML) with a top-level key 'kind'")
      ->required();
  cmd->add_option("--out", o->out, "results folder (default results/<file stem>)");
  cmd->callback([o] { run(*o); });
}

}  // namespace normlab::cli
