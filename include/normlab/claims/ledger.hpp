// `normlab claims run`: makes sure every selected claim's study has run at the tier (with the
// claim's --set overrides), decides every claim, and writes OUT/claims.json and OUT/claims.md
// (docs/claims.md). Each study that ran leaves FOLDER/ledger_study.json (its command, wall time
// and status), so that its tables alone, kept after the run folders are gone, can be decided
// again with `--decide-only`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "normlab/claims/claims_file.hpp"
#include "normlab/claims/evaluate.hpp"

namespace normlab::claims {

// One study at one tier with one list of sets: run once, shared by the claims that use it.
struct StudyRun {
  std::filesystem::path file;
  std::vector<std::string> sets;
  std::string tier;               // the tier passed to `normlab run`; "" when the file has no tiers
  std::filesystem::path folder;   // OUT/<name>[-TIER][__sets]
  std::vector<std::string> args;  // after the program: run FILE [--tier T] [--set S]... --out DIR
  double seconds = 0;
  bool ok = false;
  bool ran = true;                // false: --decide-only found no FOLDER/ledger_study.json
  std::string failure;            // why it did not finish
  std::string recorded;           // the command FOLDER/ledger_study.json recorded ("" = args)
  bool decided_by_pilot = false;  // design rule D6: not run, its pilot decides every claim
  bool trains = true;             // a training study (kind "train"), whose runs can be kept
  std::string command() const;    // "normlab run ...", shell-quoted where needed
  std::string status() const;     // "done", "failed: WHY" or "not run"
};

struct ClaimOutcome {
  Claim claim;
  size_t study = 0;     // index into LedgerResult::studies
  std::string verdict;  // reproduced, contradicted, inconclusive, untestable (ceiling),
                        // untestable (floor); "error", "study failed" or "not run"
  std::string reason;   // the decision's reason, or the error
  ClaimEvaluation evaluation;
};

struct LedgerResult {
  std::string tier;
  bool decide_only = false;  // decided from kept study folders, none of them run
  std::vector<StudyRun> studies;
  std::vector<ClaimOutcome> claims;
  // the selected papers' open questions with at least one finding among `claims`
  std::vector<Question> questions;
  // every claim has one of decided_verdicts(), or (--decide-only) not run
  bool all_decided() const;
};

struct LedgerOptions {
  std::filesystem::path claims_dir = "claims";
  std::string tier = "quick";
  std::string paper;              // only this arXiv id ("" = all)
  std::string claim;              // only this claim id ("" = all)
  std::filesystem::path out;      // default results/claims-TIER
  std::filesystem::path program;  // the normlab binary
  int jobs = 0;                   // passed to `normlab run --jobs` when > 0
  bool decide_only = false;       // start no study; decide from the folders already in `out`
  std::filesystem::path tables;   // "" or where each finished study's tables are copied
};

// The claims of `papers` selected by arXiv id and claim id (empty = all); UsageError naming
// what exists when the selection is empty.
std::vector<Claim> select_claims(const std::vector<Paper>& papers, const std::string& paper,
                                 const std::string& claim);

// The study's results folder under `out` and the `normlab run` arguments, without running.
StudyRun plan_study(const std::filesystem::path& file, const std::vector<std::string>& sets,
                    const std::string& tier, const std::filesystem::path& out, int jobs);

// Runs the studies (printing each one's wall time) and decides the claims; with
// `decide_only`, reads each study's record instead of running it.
LedgerResult run_ledger(const LedgerOptions& options);

// Whether the runs in `folder` (the study's own, or a copy) are runs of the study now
// (experiment/part_of.hpp): a pilot of a study file changed since is not.
bool folder_runs_are_part_of_study(const StudyRun& s, const std::filesystem::path& folder);
// Design rule D6 on the runs in `folder`: they are runs of the study now, and they decide every
// claim of the whole ledger (`papers`) that the study decides, whichever were selected.
bool pilot_decides(const StudyRun& s, const std::vector<Paper>& papers,
                   const std::filesystem::path& folder);

// `normlab claims run --dry-run`: each selected study as `out` has it (finished, decided by
// its pilot, finished earlier with its kept tables in `tables`), or its runs still to train
// (counting those finished among the kept runs as done) and, with `measure`, an estimate of
// their training time (dry_run.hpp's estimate_training); then the total. Nothing is trained
// or written; with `measure` each study's line is printed as soon as it is known and the
// returned text holds the total only.
std::string ledger_dry_run(const LedgerOptions& options, bool measure = true);

nlohmann::json to_json(const LedgerResult& r);
std::string to_markdown(const LedgerResult& r);

// "effect [low, high]" with 4 significant digits, as claims.md prints an effect.
std::string effect_text(double effect, double low, double high);

}  // namespace normlab::claims
