// normlab: the command-line entry point. Subcommands register themselves (commands.hpp);
// this file only maps failures to exit codes:
//   0 success, 1 runtime or input error, 2 invalid usage (bad option, value or combination).
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "help_formatter.hpp"
#include "normlab/base/errors.hpp"

namespace {

// Every message is one line (docs/design.md principle 7). Parts of it come from the user's input (a
// tensor name in a file, an option value), so control characters are shown escaped, and a word
// (a run without spaces) longer than kMaxWordChars is cut: a 100 KB argument quoted back by a
// parse error must not become a 100 KB line.
constexpr size_t kMaxWordChars = 300;

std::string escaped(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

std::string one_line(std::string_view s) {
  const std::string text = escaped(s);
  std::string out;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t space = std::min(text.find(' ', begin), text.size());
    const std::string_view word = std::string_view(text).substr(begin, space - begin);
    if (word.size() > kMaxWordChars) {
      out += fmt::format("{}... ({} bytes)", word.substr(0, kMaxWordChars), word.size());
    } else {
      out += word;
    }
    if (space < text.size()) out += ' ';
    begin = space + 1;
  }
  return out;
}

void print_error(std::string_view message) {
  std::fprintf(stderr, "normlab: %s\n", one_line(message).c_str());
}

// What to say after a command-line parse error: where the allowed options are listed, for the
// subcommand that was being parsed.
std::string parse_error_hint(CLI::App& app) {
  const std::vector<CLI::App*> chosen = app.get_subcommands();
  if (chosen.empty()) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    const std::vector<std::string> rest = app.remaining();
    std::string unknown;
    if (!rest.empty()) {
      unknown = fmt::format("unknown {} '{}'; ",
                            rest.front().starts_with('-') ? "option" : "subcommand", rest.front());
    }
    return fmt::format("{}allowed subcommands: {}; run 'normlab --help' for details", unknown,
                       fmt::join(names, ", "));
  }
  // The innermost chosen subcommand, e.g. "probe depth".
  std::string path = chosen.front()->get_name();
  for (CLI::App* sub = chosen.front(); !sub->get_subcommands().empty();) {
    sub = sub->get_subcommands().front();
    path += " " + sub->get_name();
  }
  return fmt::format("run 'normlab {} --help' for the allowed options", path);
}

// What went wrong: CLI11 reports a missing required option before an unknown one, so
// `eval --ckpt X` would say "--checkpoint is required"; the unknown option is the cause.
std::string parse_error_message(CLI::App& app, const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    CLI::App* sub = &app;
    while (!sub->get_subcommands().empty()) sub = sub->get_subcommands().front();
    for (const std::string& arg : sub->remaining()) {
      if (arg.starts_with('-')) return fmt::format("unknown option '{}'", arg);
    }
  }
  return e.what();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"normlab: a laboratory for normalization in transformers"};
  app.formatter(std::make_shared<normlab::cli::HelpFormatter>());  // before the subcommands
  app.require_subcommand(1);
  app.fallthrough(false);
  normlab::cli::add_version_command(app);
  normlab::cli::add_init_command(app);
  normlab::cli::add_forward_command(app);
  normlab::cli::add_grads_command(app);
  normlab::cli::add_train_steps_command(app);
  normlab::cli::add_run_command(app);
  normlab::cli::add_train_command(app);
  normlab::cli::add_eval_command(app);
  normlab::cli::add_probe_command(app);
  normlab::cli::add_bench_command(app);
  normlab::cli::add_particles_command(app);
  normlab::cli::add_schemes_command(app);
  normlab::cli::add_tasks_command(app);
  normlab::cli::add_claims_command(app);
  normlab::cli::add_results_command(app);
  normlab::cli::add_merge_command(app);
  normlab::cli::add_export_command(app);
  normlab::cli::add_report_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success&) {  // --version printed itself (after the help cases: they
    return 0;                      // derive from Success)
  } catch (const CLI::ParseError& e) {
    print_error(fmt::format("{}; {}", parse_error_message(app, e), parse_error_hint(app)));
    return 2;
  } catch (const normlab::UsageError& e) {
    print_error(e.what());
    return 2;
  } catch (const normlab::InputError& e) {
    print_error(e.what());
    return 1;
  } catch (const normlab::Interrupted& e) {
    print_error(e.what());
    return 130;  // 128 + SIGINT, as a shell reports a program Ctrl-C ended
  } catch (const std::bad_alloc&) {
    print_error("out of memory: this machine could not give normlab the memory the command needs");
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // The path and the system's reason, without the library's "filesystem error: " wording.
    print_error(fmt::format("{}: {}", e.path1().string(), e.code().message()));
    return 1;
  } catch (const std::exception& e) {
    // Anything else is a gap in normlab's own checks: say so, with the library's text last.
    print_error(fmt::format("unexpected failure (please report it): {}", e.what()));
    return 1;
  }
  return 0;
}
