// `normlab version`: prints the program version.
#include <cstdio>

#include "commands.hpp"

namespace normlab::cli {

void add_version_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("version", "Print the normlab version");
  cmd->callback([] { std::printf("normlab 0.1.0\n"); });
}

}  // namespace normlab::cli
