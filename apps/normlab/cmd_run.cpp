// `normlab run FILE.toml [--tier NAME] [--set KEY=VALUE ...] [--out DIR] [--jobs N]`: runs an
// experiment file, after merging the tier and the --set assignments over it
// (experiment/overrides.hpp).
//
// The file's top-level `kind` selects the study: "train" (the default; task, model, schemes,
// seeds, training and evaluation; docs/experiments.md) or "particles" (the normalized-
// attention ODE; docs/particles.md).
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/experiment/dry_run.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/experiment/mpi_comm.hpp"
#include "normlab/experiment/overrides.hpp"
#include "normlab/experiment/sweep.hpp"
#include "normlab/io/shell_quote.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/particles/study.hpp"
#include "normlab/report/html_report.hpp"
#include "normlab/train/train_config.hpp"
#include "validators.hpp"

#include <toml++/toml.h>

namespace normlab::cli {
namespace fs = std::filesystem;

namespace {

void run_train_study(const std::string& file, const std::string& tier,
                     const std::vector<std::string>& sets, const std::string& out_opt, int jobs,
                     const std::string& keep, const std::vector<std::string>& reuse, bool dry_run,
                     bool only_kept) {
  Experiment e =
      read_swept_experiment([&] { return load_experiment_document(file, tier, sets); }, file);
  e.tier = tier;
  for (const std::string& set : sets) e.sets.push_back(normalized_set(set));
  StudyOptions o;
  o.out = out_opt.empty() ? fs::path("results") / study_folder_name(e.name, tier, e.sets)
                          : fs::path(out_opt);
  o.program = fs::read_symlink("/proc/self/exe");
  o.jobs = jobs;
  o.keep = keep;
  o.reuse.assign(reuse.begin(), reuse.end());
  o.only_kept = only_kept;
  o.shard = shard_from_environment();
  if (dry_run) {
    std::printf("%s", dry_run_report(*load_experiment_document(file, tier, sets), e, o.out,
                                     o.jobs > 0 ? o.jobs : e.jobs)
                          .c_str());
    return;
  }
  // Under mpirun the ranks share the runs (docs/cluster.md); rank 0 owns the store.
  std::unique_ptr<MpiComm> mpi;
  if (launched_by_mpirun()) {
    mpi = std::make_unique<MpiComm>();
    if (mpi->size() > 1) o.mpi = mpi.get();
  }
  if (o.mpi != nullptr && o.shard.count > 1) {
    throw UsageError(
        "normlab run under mpirun inside a Slurm array: use one or the other (docs/cluster.md)");
  }
  int failed = 0;
  try {
    if (o.mpi != nullptr && o.mpi->rank() != 0) {
      run_experiment_worker(e, o);
      return;
    }
    failed = run_experiment(e, o);
  } catch (const Interrupted& stopped) {
    if (o.mpi != nullptr) {  // every rank ends; the same mpirun command resumes
      std::fprintf(stderr, "normlab: %s\n", stopped.what());
      o.mpi->abort(130);
    }
    // The same command resumes every run from where it was saved.
    std::string command = "normlab run " + shell_quoted(file);
    if (!tier.empty()) command += " --tier " + shell_quoted(tier);
    for (const std::string& set : sets) command += " --set " + shell_quoted(set);
    command += " --out " + shell_quoted(o.out.string());
    if (!keep.empty()) command += " --keep " + shell_quoted(keep);
    for (const std::string& r : reuse) command += " --reuse " + shell_quoted(r);
    throw Interrupted(fmt::format("{}; `{}` resumes", stopped.what(), command));
  } catch (const std::exception& error) {
    if (o.mpi == nullptr) throw;
    // One rank failing ends them all; a re-run of the same command resumes every run.
    std::fprintf(stderr, "normlab (MPI rank %d): error: %s\n", o.mpi->rank(), error.what());
    o.mpi->abort(dynamic_cast<const UsageError*>(&error) != nullptr ? 2 : 1);
  }
  if (o.shard.count > 1) {
    std::printf(
        "shard %d of %d: its runs are in %s and their rows in %s; when every shard has finished, "
        "`normlab merge %s` joins the shard stores and `normlab run` of the same file with --out "
        "%s writes the summaries\n",
        o.shard.index, o.shard.count, (o.out / "runs").string().c_str(),
        results_store_file(o.out, o.shard).string().c_str(), o.out.string().c_str(),
        o.out.string().c_str());
    if (failed > 0) {
      throw InputError(
          fmt::format("{} run(s) of this shard failed; run the same array task "
                      "again to resume them",
                      failed));
    }
    return;
  }
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
  std::printf("%s\n", report_line_after_run(o.out).c_str());
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
  auto keep = std::make_shared<std::string>();
  auto reuse = std::make_shared<std::vector<std::string>>();
  auto dry_run = std::make_shared<bool>(false);
  auto only_kept = std::make_shared<bool>(false);
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
  cmd->add_option("--keep", *keep,
                  "Keep each run as it ends (probed, without checkpoints) in this folder, and "
                  "restore from it the runs the results folder lacks (docs/experiments.md, "
                  "\"Keeping runs\")")
      ->check(non_empty_path());
  cmd->add_option("--reuse", *reuse,
                  "A folder of other studies' runs (a results folder's runs/, or kept runs), "
                  "repeatable: a run that ended there with the same settings is copied instead "
                  "of trained (not for a study with a [probe] table; docs/experiments.md, "
                  "\"Reusing runs\")")
      ->allow_extra_args(false)
      ->check(non_empty_path());
  cmd->add_flag("--dry-run", *dry_run,
                "Train nothing: print every resolved value and where it was written, each run "
                "and its state in the results folder, and an estimate of the training time");
  cmd->add_flag("--only-kept", *only_kept,
                "Train nothing: restore the runs kept in --keep's folder that the results folder "
                "lacks and write the tables from the runs there (docs/experiments.md, \"Keeping "
                "runs\")");
  cmd->callback([=] {
    if (*only_kept && keep->empty()) {
      throw UsageError("--only-kept restores kept runs: name their folder with --keep");
    }
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
      run_train_study(*file, applied, *sets, *out, *jobs, *keep, *reuse, *dry_run, *only_kept);
    } else {
      if (launched_by_mpirun()) {
        throw UsageError("a particle study runs in one process; start it without mpirun");
      }
      if (!keep->empty() || !reuse->empty()) {
        throw UsageError(
            "--keep and --reuse are for a training study's runs; a particle study has none");
      }
      if (*dry_run)
        throw UsageError("--dry-run lists a training study's runs; a particle study has none");
      if (table->contains("sweep")) {
        throw UsageError(top.where("sweep") +
                         "[sweep] is for training experiments; a particle study lists its runs "
                         "(docs/particles.md)");
      }
      const std::string name = fs::path(*file).stem().string();
      particles::run_study(top,
                           out->empty()
                               ? fs::path("results") / study_folder_name(name, applied, normalized)
                               : fs::path(*out),
                           *jobs);
    }
  });
}

}  // namespace normlab::cli
