// `normlab claims list|run|seeds|diff`: the claims ledger (docs/claims.md).
//
//   normlab claims list [--paper P] [--ledger FILE]... [--claims DIR]
//       one line per claim: id, arXiv id, verdict in the ledger files (default the committed
//       full-tier ledger: docs/claims.json, or while the papers' full tiers are committed one
//       by one, every docs/claims-full-*.json) or "not run", the sentence; a verdict is
//       reproduced, contradicted, inconclusive, untestable (ceiling) or untestable (floor)
//   normlab claims run [--tier T] [--paper P] [--claim ID] [--out DIR] [--jobs N] [--claims DIR]
//                      [--tables DIR] [--decide-only]
//       runs each selected claim's study at the tier (reusing finished runs), decides every
//       claim, writes OUT/claims.json and OUT/claims.md (default OUT results/claims-TIER);
//       --tables keeps a copy of each finished study's tables, --decide-only decides from
//       study folders already in OUT (such copies) without running anything
//   normlab claims diff BEFORE AFTER
//       two claims.json (or folders holding one) side by side: every claim's verdict and
//       effect in each, and whether its verdict or its effect moved
//   normlab claims seeds [--tier T] [--paper P] [--claim ID] --out DIR [--ledger FILE]
//       design rule D3: each claim's seed count from its baseline-only pilot in its study
//       folder under DIR, and each study folder's count (the largest of its claims')
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/claims/claims_file.hpp"
#include "normlab/claims/design_rules.hpp"
#include "normlab/claims/informativeness.hpp"
#include "normlab/claims/ledger.hpp"
#include "normlab/claims/ledger_diff.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/json_file.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/train/train_config.hpp"
#include "validators.hpp"

namespace normlab::cli {
namespace fs = std::filesystem;

namespace {

// The committed full-tier ledger: docs/claims.json once every paper's full tier is in one
// ledger; until then each paper's own, docs/claims-full-ARXIV.json.
std::vector<std::string> committed_ledgers() {
  if (fs::exists("docs/claims.json")) return {"docs/claims.json"};
  std::vector<std::string> files;
  if (!fs::is_directory("docs")) return files;
  for (const fs::directory_entry& e : fs::directory_iterator("docs")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("claims-full-", 0) == 0 && e.path().extension() == ".json") {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// id → verdict of a claims.json, added to `out` (a claim already there keeps its verdict);
// nothing when the file does not exist.
void read_ledger_verdicts(const fs::path& file, std::map<std::string, std::string>& out) {
  if (!fs::exists(file)) return;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(file));
    for (const nlohmann::json& c : j.at("claims")) {
      out.emplace(c.at("id").get<std::string>(), c.at("verdict").get<std::string>());
    }
  } catch (const nlohmann::json::exception&) {
    throw InputError(
        fmt::format("{}: not a claims ledger (no claims list with id and verdict strings); "
                    "expected the claims.json that `normlab claims run` writes",
                    file.string()));
  }
}

void list_claims(const fs::path& claims_dir, const std::string& paper,
                 const std::vector<std::string>& ledgers) {
  const std::vector<claims::Claim> selected =
      claims::select_claims(claims::read_ledger(claims_dir), paper, "");
  std::map<std::string, std::string> verdicts;
  for (const std::string& file : ledgers) read_ledger_verdicts(file, verdicts);
  // Text from the claims files and the ledger, without terminal control bytes.
  const auto verdict_of = [&](const claims::Claim& c) {
    const auto it = verdicts.find(c.id);
    return it == verdicts.end() ? std::string("not run") : without_controls(it->second);
  };
  // Columns as wide as their longest entry, the verdict's at least 12 characters
  // ("untestable (ceiling)" is 20).
  size_t width = 0, verdict_width = 12;
  for (const claims::Claim& c : selected) {
    width = std::max(width, without_controls(c.id).size());
    verdict_width = std::max(verdict_width, verdict_of(c).size());
  }
  // The claims, then the findings (expect = "measure") under a line of their own.
  for (const bool findings : {false, true}) {
    bool first = true;
    for (const claims::Claim& c : selected) {
      if (c.finding() != findings) continue;
      if (findings && first) std::printf("\nfindings (measured, no side expected):\n");
      first = false;
      std::printf("%-*s  %-10s  %-*s  %s\n", static_cast<int>(width),
                  without_controls(c.id).c_str(), without_controls(c.paper).c_str(),
                  static_cast<int>(verdict_width), verdict_of(c).c_str(),
                  without_controls(c.sentence).c_str());
    }
  }
}

// id → the claim's effect and interval in a claims.json; empty when the file does not exist.
std::map<std::string, claims::KeptInterval> read_kept_intervals(const fs::path& file) {
  std::map<std::string, claims::KeptInterval> out;
  if (!fs::exists(file)) return out;
  read_json_file(file, [&](const nlohmann::json& j) {
    for (const nlohmann::json& c : j.at("claims")) {
      if (!c.contains("effect") || !c.at("low").is_number() || !c.at("high").is_number()) continue;
      out[c.at("id").get<std::string>()] = {c.at("effect").get<double>(), c.at("low").get<double>(),
                                            c.at("high").get<double>()};
    }
  });
  return out;
}

// One line per claim: pilot seeds, the baseline's sd, δ, the seed count and its rule; then
// each study folder's count.
void print_seed_counts(const fs::path& claims_dir, const std::string& paper,
                       const std::string& claim, const std::string& tier, const fs::path& out,
                       const fs::path& ledger) {
  const std::vector<claims::Paper> papers = claims::read_ledger(claims_dir);
  const std::vector<claims::Claim> selected = claims::select_claims(papers, paper, claim);
  const std::map<std::string, claims::KeptInterval> kept = read_kept_intervals(ledger);
  struct FolderCount {
    int seeds = 0;
    int without_pilot = 0;  // claims whose count waits for a pilot (or could not be read)
    claims::StudyRun study;
  };
  std::map<std::string, FolderCount> per_folder;
  for (const claims::Claim& c : selected) {
    const claims::StudyRun study = claims::plan_study(c.study, c.sets, tier, out, 0);
    const std::string folder = study.folder.filename().string();
    const auto k = kept.find(c.id);
    per_folder[folder].study = study;
    if (claims::informativeness_applies(c) && fs::exists(study.folder / "experiment.json") &&
        !claims::folder_runs_are_part_of_study(study, study.folder)) {
      std::printf(
          "%s  %s: the runs there are not runs of the study now (its file or settings changed "
          "since they ran): no pilot to read\n",
          c.id.c_str(), folder.c_str());
      ++per_folder[folder].without_pilot;
      continue;
    }
    try {
      const claims::SeedCount s = claims::seed_count(
          c, study.folder,
          k == kept.end() ? std::nullopt : std::optional<claims::KeptInterval>(k->second));
      if (s.baseline.empty()) {
        std::printf("%s  %s: no pilot needed -> %d seeds (%s)\n", c.id.c_str(), folder.c_str(),
                    s.seeds, s.rule.c_str());
      } else {
        std::printf("%s  %s: pilot n = %zu, baseline sd %.4g, delta %s -> %d seeds (%s)\n",
                    c.id.c_str(), folder.c_str(), s.baseline.size(), s.sd,
                    s.delta ? fmt::format("{:.4g}", *s.delta).c_str() : "none", s.seeds,
                    s.rule.c_str());
      }
      FolderCount& f = per_folder[folder];
      f.seeds = std::max(f.seeds, s.seeds);
    } catch (const InputError& e) {
      std::printf("%s  %s: %s\n", c.id.c_str(), folder.c_str(), e.what());
      ++per_folder[folder].without_pilot;
    }
  }
  if (!per_folder.empty()) std::printf("\nseeds per study folder (the largest of its claims'):\n");
  for (const auto& [folder, f] : per_folder) {
    if (f.without_pilot > 0) {
      std::printf("  %-48s none yet: %d claim(s) wait for the pilot (D3, above)\n", folder.c_str(),
                  f.without_pilot);
    } else if (claims::pilot_decides(f.study, papers, f.study.folder)) {
      std::printf("  %-48s %d, decided by its pilot (D6): no other arm runs\n", folder.c_str(),
                  f.seeds);
    } else {
      std::printf("  %-48s %d\n", folder.c_str(), f.seeds);
    }
  }
}

}  // namespace

void add_claims_command(CLI::App& app) {
  auto* claims_cmd = app.add_subcommand(
      "claims", "The claims ledger: each paper claim decided from its study (docs/claims.md)");
  claims_cmd->require_subcommand(1);

  auto* list = claims_cmd->add_subcommand("list", "One line per claim with its ledger verdict");
  auto list_paper = std::make_shared<std::string>();
  auto list_ledgers = std::make_shared<std::vector<std::string>>();
  auto list_dir = std::make_shared<std::string>("claims");
  list->add_option("--paper", *list_paper, "Only this paper (arXiv id, e.g. 2510.08341)");
  list->add_option("--ledger", *list_ledgers,
                   "claims.json whose verdicts to show, repeatable (default the committed "
                   "full-tier ledger: docs/claims.json, or every docs/claims-full-*.json while "
                   "there is none)");
  list->add_option("--claims", *list_dir, "Folder of claims files (default claims)");
  list->callback([=] {
    list_claims(*list_dir, *list_paper,
                list_ledgers->empty() ? committed_ledgers() : *list_ledgers);
  });

  auto* seeds = claims_cmd->add_subcommand(
      "seeds",
      "Design rule D3 (docs/claims.md): each claim's seed count from its baseline-only pilot "
      "in its study folder under OUT");
  auto seeds_tier = std::make_shared<std::string>("full");
  auto seeds_paper = std::make_shared<std::string>();
  auto seeds_claim = std::make_shared<std::string>();
  auto seeds_out = std::make_shared<std::string>();
  auto seeds_ledger = std::make_shared<std::string>("docs/claims.json");
  auto seeds_dir = std::make_shared<std::string>("claims");
  seeds->add_option("--tier", *seeds_tier, "Tier the pilots ran at (default full)")
      ->check(CLI::IsMember({"quick", "full"}));
  seeds->add_option("--paper", *seeds_paper, "Only this paper's claims (arXiv id)");
  seeds->add_option("--claim", *seeds_claim, "Only this claim (its id)");
  seeds->add_option("--out", *seeds_out, "The ledger's output folder the pilots ran into")
      ->required()
      ->check(non_empty_path());
  seeds->add_option("--ledger", *seeds_ledger,
                    "Kept ledger whose intervals D3's 'at least 10' reads (default "
                    "docs/claims.json)");
  seeds->add_option("--claims", *seeds_dir, "Folder of claims files (default claims)");
  seeds->callback([=] {
    print_seed_counts(*seeds_dir, *seeds_paper, *seeds_claim, *seeds_tier, *seeds_out,
                      *seeds_ledger);
  });

  auto* diff = claims_cmd->add_subcommand(
      "diff",
      "Two ledgers side by side: every claim's verdict and effect in each, and what moved "
      "(a Markdown table)");
  auto diff_before = std::make_shared<std::string>();
  auto diff_after = std::make_shared<std::string>();
  diff->add_option("BEFORE", *diff_before, "claims.json, or the folder holding it")
      ->required()
      ->check(non_empty_path());
  diff->add_option("AFTER", *diff_after, "claims.json, or the folder holding it")
      ->required()
      ->check(non_empty_path());
  diff->callback([=] {
    const auto ledger_file = [](const fs::path& p) {
      const fs::path file = fs::is_directory(p) ? p / "claims.json" : p;
      if (!fs::exists(file)) {
        throw InputError(fmt::format("{}: no such file (a claims.json, or a folder holding one)",
                                     file.string()));
      }
      return file;
    };
    const fs::path before = ledger_file(*diff_before), after = ledger_file(*diff_after);
    std::fputs(
        claims::diff_markdown(claims::diff_ledgers(parse_json_file(before), parse_json_file(after),
                                                   before.string(), after.string()))
            .c_str(),
        stdout);
  });

  auto* run = claims_cmd->add_subcommand(
      "run",
      "Run each selected claim's study at a tier (finished runs are reused), decide every "
      "claim, write OUT/claims.json and OUT/claims.md; exit 1 if a study failed or a claim "
      "could not be decided");
  auto o = std::make_shared<claims::LedgerOptions>();
  auto out = std::make_shared<std::string>();
  run->add_option("--tier", o->tier,
                  "Tier of the studies: quick or full (a study file without tiers runs as "
                  "written; default quick)")
      ->check(CLI::IsMember({"quick", "full"}));
  run->add_option("--paper", o->paper, "Only this paper's claims (arXiv id)");
  run->add_option("--claim", o->claim, "Only this claim (its id)");
  run->add_option("--out", *out, "Output folder (default results/claims-TIER)")
      ->check(non_empty_path());
  auto* jobs =
      run->add_option("--jobs", o->jobs, "Runs at a time inside each study (default: the file's)")
          ->check(integer_in(train_limits::threads));
  auto run_dir = std::make_shared<std::string>("claims");
  run->add_option("--claims", *run_dir, "Folder of claims files (default claims)");
  auto tables = std::make_shared<std::string>();
  auto* tables_option =
      run->add_option(
             "--tables", *tables,
             "After each study finishes, copy its tables (the CSV, JSON, Markdown and TOML "
             "files at the top of its folder) into DIR/<study folder>: what to keep when "
             "the run folders cannot be")
          ->check(non_empty_path());
  auto* decide_only =
      run->add_flag("--decide-only", o->decide_only,
                    "Run no study: decide each claim from its study folder already in OUT (e.g. "
                    "tables kept with --tables); a study without its record there is 'not run'")
          ->excludes(tables_option)
          ->excludes(jobs);
  auto dry_run = std::make_shared<bool>(false);
  run->add_flag("--dry-run", *dry_run,
                "Run and write nothing: list each study as OUT (and --tables) has it, its runs "
                "still to train and an estimate of their training time on this machine "
                "(timed steps of each variant, a few seconds each), and the total")
      ->excludes(decide_only);
  run->callback([=] {
    claims::LedgerOptions options = *o;
    options.claims_dir = *run_dir;
    options.out = out->empty() ? fs::path("results") / ("claims-" + options.tier) : fs::path(*out);
    options.program = fs::read_symlink("/proc/self/exe");
    options.tables = *tables;
    if (*dry_run) {
      std::fputs(claims::ledger_dry_run(options).c_str(), stdout);
      return;
    }
    const claims::LedgerResult r = claims::run_ledger(options);
    write_file_atomic(options.out / "claims.json", claims::to_json(r).dump(2) + "\n");
    write_file_atomic(options.out / "claims.md", claims::to_markdown(r));
    std::printf("\n");
    size_t verdict_width = 12;  // "untestable (ceiling)" widens it
    for (const claims::ClaimOutcome& c : r.claims) {
      verdict_width = std::max(verdict_width, c.verdict.size());
    }
    for (const claims::ClaimOutcome& c : r.claims) {
      std::printf("%-*s  %s\n", static_cast<int>(verdict_width), c.verdict.c_str(),
                  c.claim.id.c_str());
    }
    std::printf("\nwrote %s/claims.json, claims.md\n", options.out.string().c_str());
    std::vector<std::string> failed;
    for (const claims::StudyRun& s : r.studies) {
      if (s.ran && !s.ok) failed.push_back(s.file.string());
    }
    if (!failed.empty()) {
      throw InputError(fmt::format("study failed: {}; its claims are marked 'study failed'",
                                   fmt::join(failed, ", ")));
    }
    if (!r.all_decided()) {
      throw InputError(
          "a claim could not be decided (verdict 'error'; the reason is in "
          "claims.json and above)");
    }
  });
}

}  // namespace normlab::cli
