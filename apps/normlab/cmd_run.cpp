// `normlab run FILE.toml [--tier NAME] [--set KEY=VALUE ...] [--out DIR] [--jobs N]`: runs an
// experiment file, after merging the tier and the --set assignments over it
// (experiment_overrides.hpp).
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
#include "normlab/experiment_overrides.hpp"
#include "normlab/particles/study.hpp"
#include "normlab/sweep.hpp"
#include "normlab/toml_reader.hpp"
#include "normlab/train_config.hpp"
#include "validators.hpp"

#include <toml++/toml.h>

namespace normlab::cli {
namespace fs = std::filesystem;

namespace {

void run_train_study(const std::string& file, const std::string& tier,
                     const std::vector<std::string>& sets, const std::string& out_opt, int jobs) {
  Experiment e =
      read_swept_experiment([&] { return load_experiment_document(file, tier, sets); }, file);
  e.tier = tier;
  for (const std::string& set : sets) e.sets.push_back(normalized_set(set));
  StudyOptions o;
  o.out = out_opt.empty() ? fs::path("results") / study_folder_name(e.name, tier, e.sets)
                          : fs::path(out_opt);
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
  const std::string bridge = bridge_report(e, o.out);
  std::printf("%s", bridge.c_str());
  std::printf("\nwrote %s/results.csv, summary.csv, summary.md, curves.csv%s%s%s%s%s\n",
              o.out.string().c_str(), plotted ? ", curves.png" : "",
              depth.empty() ? "" : ", depth.csv, depth_layers.csv, depth_blocks.csv, depth_*.png",
              features.empty() ? "" : ", features.csv, features_fit.csv, features_*.png",
              dilution.empty() ? "" : ", dilution.csv, dilution_fit.csv, dilution.png",
              bridge.empty() ? "" : ", bridge.csv, bridge_cosine.png");
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
  auto tier = std::make_shared<std::string>();
  auto sets = std::make_shared<std::vector<std::string>>();
  cmd->add_option("FILE", *file, "Experiment file")->required();
  cmd->add_option("--tier", *tier,
                  "Tier of the file to run: its [tier.NAME] table merged over the file (default "
                  "quick when the file has tiers)");
  cmd->add_option("--set", *sets,
                  "KEY=VALUE, repeatable: a dotted key and a TOML value merged over the file "
                  "after the tier, e.g. --set train.lr=3e-3 --set 'train.schedule=\"cosine\"'")
      ->allow_extra_args(false);
  cmd->add_option("--out", *out,
                  "Results folder (default results/NAME, results/NAME-TIER with tiers, "
                  "then __KEY=VALUE per --set)")
      ->check(non_empty_path());
  cmd->add_option("--jobs", *jobs, "Runs at a time (default: the file's jobs)")
      ->check(integer_in(train_limits::threads));
  cmd->callback([=] {
    const std::vector<std::string> tiers = tier_names(*parse_experiment_file(*file), *file);
    std::string applied;
    auto table = load_experiment_document(*file, *tier, *sets, &applied);
    if (tier->empty() && !applied.empty()) {
      std::printf("tier %s (tiers in %s: %s; choose with --tier)\n", applied.c_str(), file->c_str(),
                  fmt::format("{}", fmt::join(tiers, ", ")).c_str());
    }
    std::vector<std::string> normalized;
    for (const std::string& set : *sets) normalized.push_back(normalized_set(set));
    TomlSection top(table.get(), *file, "top level");
    const std::string kind = top.get_choice("kind", "train", {"train", "particles"});
    if (kind == "train") {
      run_train_study(*file, applied, *sets, *out, *jobs);
    } else {
      if (table->contains("sweep")) {
        throw UsageError(top.where("sweep") +
                         "[sweep] is for training experiments; a particle study lists its runs "
                         "(docs/particles.md)");
      }
      const std::string name = fs::path(*file).stem().string();
      particles::run_study(
          top, out->empty() ? fs::path("results") / study_folder_name(name, applied, normalized)
                            : fs::path(*out));
    }
  });
}

}  // namespace normlab::cli
