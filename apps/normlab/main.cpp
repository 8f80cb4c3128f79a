// normlab: the command-line entry point. Subcommands register themselves (commands.hpp);
// this file only maps failures to exit codes:
//   0 success, 1 runtime or input error, 2 invalid usage (bad option, value or combination).
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "normlab/errors.hpp"

int main(int argc, char** argv) {
  CLI::App app{"normlab: a laboratory for normalization in transformers"};
  app.require_subcommand(1);
  app.fallthrough(false);
  normlab::cli::add_version_command(app);
  normlab::cli::add_particles_command(app);
  normlab::cli::add_run_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "normlab: %s\n", e.what());
    std::fprintf(stderr, "Run with --help for the allowed options.\n");
    return 2;
  } catch (const normlab::UsageError& e) {
    std::fprintf(stderr, "normlab: %s\n", e.what());
    return 2;
  } catch (const normlab::InputError& e) {
    std::fprintf(stderr, "normlab: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "normlab: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
