// `normlab version` and `normlab --version`: the program version, the commit it was built
// from, the CPU and the kernels in use (normlab/core/machine.hpp).
#include <cstdio>

#include "commands.hpp"
#include "normlab/core/machine.hpp"
#include "normlab/store/provenance.hpp"

namespace normlab::cli {

namespace {

void print_version() {
  const std::string commit = build_git_commit();
  std::printf("normlab %s%s\n", normlab_version().c_str(),
              commit.empty() ? "" : (" (commit " + commit + ")").c_str());
  std::printf("%s", describe_machine(machine_info()).c_str());
}

}  // namespace

void add_version_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("version", "Print the normlab version");
  cmd->callback(print_version);
  // `normlab --version` too (issue 13: it was refused).
  app.add_flag_callback(
      "--version",
      [] {
        print_version();
        throw CLI::Success();
      },
      "Print the normlab version and exit");
}

}  // namespace normlab::cli
