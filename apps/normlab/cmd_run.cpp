// `normlab run FILE.toml [--out DIR] [--jobs N]`: runs an experiment file.
//
// The file's top-level `kind` selects the study: "train" (the default; task, model, schemes,
// seeds, training and evaluation; docs/experiments.md) or "particles" (the normalized-
// attention ODE; docs/particles.md).
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "normlab/errors.hpp"
#include "normlab/experiment.hpp"
#include "normlab/particles/study.hpp"
#include "normlab/toml_reader.hpp"

#include <toml++/toml.h>

namespace normlab::cli {
namespace fs = std::filesystem;

namespace {

void run_train_study(TomlSection& top, const std::string& file, const std::string& out_opt,
                     int jobs) {
  const Experiment e = read_experiment(top, file);
  StudyOptions o;
  o.out = out_opt.empty() ? fs::path("results") / e.name : fs::path(out_opt);
  o.program = fs::read_symlink("/proc/self/exe");
  o.jobs = jobs;
  const int failed = run_experiment(e, o);
  std::printf("%s", collect_results(e, o.out).c_str());
  const bool plotted = write_curves(e, o.out);
  const std::string depth = depth_report(e, o.out);
  std::printf("%s", depth.c_str());
  const std::string features = features_report(e, o.out);
  std::printf("%s", features.c_str());
  const std::string dilution = dilution_report(e, o.out);
  std::printf("%s", dilution.c_str());
  std::printf("\nwrote %s/results.csv, summary.csv, summary.md, curves.csv%s%s%s%s\n",
              o.out.string().c_str(), plotted ? ", curves.png" : "",
              depth.empty() ? "" : ", depth.csv, depth_layers.csv, depth_blocks.csv, depth_*.png",
              features.empty() ? "" : ", features.csv, features_fit.csv, features_*.png",
              dilution.empty() ? "" : ", dilution.csv, dilution_fit.csv, dilution.png");
  if (failed > 0) {
    throw InputError(
        fmt::format("{} run(s) failed; fix the cause and run the same command again "
                    "to resume them",
                    failed));
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run an experiment file (TOML)");
  auto file = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto jobs = std::make_shared<int>(0);
  cmd->add_option("FILE", *file, "Experiment file")->required();
  cmd->add_option("--out", *out, "Results folder (default results/NAME)");
  cmd->add_option("--jobs", *jobs, "Runs at a time (default: the file's jobs)")
      ->check(CLI::Range(1, 256));
  cmd->callback([=] {
    auto table = parse_toml_file(*file);
    TomlSection top(table.get(), *file, "top level");
    const std::string kind = top.get_choice("kind", "train", {"train", "particles"});
    if (kind == "train") {
      run_train_study(top, *file, *out, *jobs);
    } else {
      particles::run_study(
          top, out->empty() ? fs::path("results") / fs::path(*file).stem() : fs::path(*out));
    }
  });
}

}  // namespace normlab::cli
