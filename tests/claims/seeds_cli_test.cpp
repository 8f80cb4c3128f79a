// `normlab claims seeds` (design rule D3, docs/claims.md) on a synthetic pilot: the baseline arm
// (pre) alone, five seeds, in the study folder the ledger would use; and D6, a pilot that
// decides its study, through `claims seeds` and `claims run`.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "normlab/experiment/experiment.hpp"
#include "normlab/experiment/overrides.hpp"
#include "normlab/experiment/sweep.hpp"
#include "support/cli.hpp"
#include "support/tiny_study.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::run_normlab;
using testing::TempDir;

using testing::kTinyStudy;

// A pilot's results.csv: pre's TVD per seed at the lengths beyond training (6 and 7; the tiny
// study trains to 4), each length the seed's value, and the evaluator's chance rows at 0.5.
std::string pilot_table(const std::vector<double>& per_seed) {
  std::string csv =
      "experiment,variant,scheme,norm,seed,weights,length,seq_len,metric,value,ci_low,ci_high,"
      "count\n";
  for (size_t i = 0; i < per_seed.size(); ++i) {
    for (int n : {2, 6, 7}) {
      for (const char* metric : {"tvd", "tvd_chance"}) {
        const double v = std::string(metric) == "tvd" ? per_seed[i] : 0.5;
        csv += fmt::format("claims_tiny,pre,pre,rmsnorm,{},raw,{},{},{},{},{},{},100\n", i + 1, n,
                           n + 1, metric, v, v, v);
      }
    }
  }
  return csv;
}

// The experiment.json `normlab run` writes for the tiny study's quick tier with `sets`.
nlohmann::json tiny_experiment_json(const std::vector<std::string>& sets) {
  Experiment e = read_swept_experiment(
      [&] { return load_experiment_document(kTinyStudy, "quick", sets); }, kTinyStudy.string());
  e.tier = "quick";
  for (const std::string& set : sets) e.sets.push_back(normalized_set(set));
  return to_json(e);
}

// A pilot of pre alone (the study's runs but post's) with `per_seed` as its table.
void write_pilot(const fs::path& folder, const std::vector<double>& per_seed) {
  testing::write_bytes(folder / "results.csv", pilot_table(per_seed));
  testing::write_bytes(folder / "experiment.json",
                       tiny_experiment_json({"schemes=[\"pre\"]"}).dump(2));
}

// The claim D1 governs: post against pre, TVD beyond the training lengths.
std::string post_vs_pre_claim() {
  return R"([[claim]]
id = "tiny.post_vs_pre"
sentence = "Post-norm lowers TVD beyond the training lengths, compared with pre-norm."
study = ")" +
         kTinyStudy.string() + R"("
terms = [
  { weight = 1.0,  filter = { variant = "post", weights = "raw", metric = "tvd", length = "beyond_training" } },
  { weight = -1.0, filter = { variant = "pre",  weights = "raw", metric = "tvd", length = "beyond_training" } },
]
expect = "negative"
)";
}

const char* kTinyPaper = "paper = \"0000.00001\"\ntitle = \"A tiny paper\"\n";

void write_claim(const fs::path& dir) {
  testing::write_bytes(dir / "tiny.toml", kTinyPaper + post_vs_pre_claim());
}

// A claim on the dilution fit's table (no D1 check: no floor and ceiling), in DIR/tiny.toml.
void write_fit_claim(const fs::path& dir, const std::string& sentence, const std::string& expect) {
  testing::write_bytes(dir / "tiny.toml", R"(paper = "0000.00001"
title = "A tiny paper"
[[claim]]
id = "tiny.fit"
sentence = ")" + sentence + R"("
study = ")" + kTinyStudy.string() + R"("
source = "dilution_fit.csv"
terms = [ { weight = 1.0, filter = { variant = "pre", metric = "slope" } } ]
expect = ")" + expect + R"("
)");
}

TEST(ClaimsSeeds, FromTheBaselineSpreadOfASyntheticPilot) {
  TempDir tmp;
  write_claim(tmp / "claims");
  // sd 0.03162 of pre's TVD; δ = 0.05·|0 − 0.5| = 0.025: t_14·√2·sd/√15 = 0.0248 ≤ δ and
  // t_13·√2·sd/√14 = 0.0258 > δ, so 15 seeds.
  write_pilot(tmp / "out" / "claims_tiny-quick", {0.22, 0.18, 0.26, 0.20, 0.24});
  const auto r =
      run_normlab({"claims", "seeds", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "out").string(), "--ledger", (tmp / "none.json").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("pilot n = 5, baseline sd 0.03162, delta 0.025 -> 15 seeds"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("claims_tiny-quick"), std::string::npos) << r.out;
}

// The pilot is seeds 1 to 5 (D3): a folder that has since run seeds 6 to 10 of the baseline,
// here far noisier, gives the count the pilot gave.
TEST(ClaimsSeeds, ReadsThePilotsSeedsAloneAfterMoreHaveRun) {
  TempDir tmp;
  write_claim(tmp / "claims");
  write_pilot(tmp / "out" / "claims_tiny-quick",
              {0.22, 0.18, 0.26, 0.20, 0.24, 0.02, 0.45, 0.01, 0.44, 0.03});
  const auto r =
      run_normlab({"claims", "seeds", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "out").string(), "--ledger", (tmp / "none.json").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("pilot n = 5, baseline sd 0.03162, delta 0.025 -> 15 seeds"),
            std::string::npos)
      << r.out;
}

TEST(ClaimsSeeds, AWideKeptIntervalAsksForTen) {
  TempDir tmp;
  write_claim(tmp / "claims");
  // A quiet baseline (sd 0.0016) needs 5 by resolution; the kept interval [−0.1, 0.08] is wider
  // than its effect −0.01, so at least 10.
  write_pilot(tmp / "out" / "claims_tiny-quick", {0.200, 0.202, 0.198, 0.201, 0.199});
  testing::write_bytes(tmp / "kept.json", R"({"claims": [{"id": "tiny.post_vs_pre",
    "verdict": "inconclusive", "effect": -0.01, "low": -0.1, "high": 0.08}]})");
  const auto r =
      run_normlab({"claims", "seeds", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "out").string(), "--ledger", (tmp / "kept.json").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("-> 10 seeds (t·√2·sd/√n ≤ δ gives 5; the kept interval is wider"),
            std::string::npos)
      << r.out;
}

TEST(ClaimsSeeds, NoPilotSaysSo) {
  TempDir tmp;
  write_claim(tmp / "claims");
  const auto r = run_normlab({"claims", "seeds", "--tier", "quick", "--claims",
                              (tmp / "claims").string(), "--out", (tmp / "out").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("no pilot in"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("none yet: 1 claim(s) wait for the pilot"), std::string::npos) << r.out;
}

// A claim without D1's check that the kept ledger has no interval for (a claim added since):
// the minimum, and the rule says there is no kept interval.
TEST(ClaimsSeeds, AClaimWithoutAKeptIntervalTakesTheMinimum) {
  TempDir tmp;
  write_fit_claim(tmp / "claims", "The fitted slope is measured.", "measure");
  testing::write_bytes(tmp / "kept.json", R"({"claims": []})");
  const auto r =
      run_normlab({"claims", "seeds", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "out").string(), "--ledger", (tmp / "kept.json").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("tiny.fit  claims_tiny-quick: no pilot needed -> 5 seeds (no D1 check; "
                       "no kept interval: 5)"),
            std::string::npos)
      << r.out;
}

// A claim on a table other than results.csv has no D1 check (no floor and ceiling): its count
// comes from the kept interval alone, with no pilot in the folder.
TEST(ClaimsSeeds, AClaimWithoutFloorAndCeilingNeedsNoPilot) {
  TempDir tmp;
  write_fit_claim(tmp / "claims", "The fitted slope is negative.", "negative");
  testing::write_bytes(tmp / "kept.json", R"({"claims": [{"id": "tiny.fit",
    "verdict": "inconclusive", "effect": -0.01, "low": -0.1, "high": 0.08}]})");
  const auto r =
      run_normlab({"claims", "seeds", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "out").string(), "--ledger", (tmp / "kept.json").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("tiny.fit  claims_tiny-quick: no pilot needed -> 10 seeds (no D1 check; "
                       "the kept interval is wider than its effect: at least 10)"),
            std::string::npos)
      << r.out;
}

// D6: pre's TVD is 0.01 at both lengths beyond training, within ε = 0.025 of the ceiling 0
// (the floor is the chance rows' 0.5), so D1 finds the claim untestable on the pilot alone. The
// seeds command says the pilot decides; the ledger then trains nothing (the tiny study would
// train pre and post for two seeds) and decides the claim untestable (ceiling) with no pairs.
TEST(ClaimsSeeds, APilotAtTheCeilingDecidesItsStudy) {
  TempDir tmp;
  write_claim(tmp / "claims");
  const fs::path study = tmp / "out" / "claims_tiny-quick";
  write_pilot(study, {0.01, 0.01, 0.01, 0.01, 0.01});
  auto r = run_normlab({"claims", "seeds", "--tier", "quick", "--claims", (tmp / "claims").string(),
                        "--out", (tmp / "out").string(), "--ledger", (tmp / "none.json").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("-> 5 seeds (decided by its pilot (D6): 0 of 2 length(s) beyond training"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("claims_tiny-quick                                5, decided by its pilot "
                       "(D6): no other arm runs"),
            std::string::npos)
      << r.out;

  r = run_normlab({"claims", "run", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "out").string(), "--tables", (tmp / "kept").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("study claims_tiny-quick: decided by its pilot (design rule D6)"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(study / "runs")) << "the ledger trained an arm";
  const auto record = nlohmann::json::parse(testing::slurp(study / "ledger_study.json"));
  EXPECT_TRUE(record.value("decided_by_pilot", false)) << record.dump();
  EXPECT_TRUE(fs::exists(tmp / "kept" / "claims_tiny-quick" / "results.csv"));
  const auto ledger = nlohmann::json::parse(testing::slurp(tmp / "out" / "claims.json"));
  const nlohmann::json& claim = ledger.at("claims").at(0);
  EXPECT_EQ(claim.at("verdict"), "untestable (ceiling)") << claim.dump();
  EXPECT_TRUE(claim.at("values").empty()) << claim.dump();
  EXPECT_TRUE(claim.at("effect").is_null()) << claim.dump();

  // A second ledger run, and one deciding from the kept tables, say the same.
  r = run_normlab({"claims", "run", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "kept").string(), "--decide-only"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  const auto kept = nlohmann::json::parse(testing::slurp(tmp / "kept" / "claims.json"));
  EXPECT_EQ(kept.at("claims").at(0).at("verdict"), "untestable (ceiling)") << kept.dump();
}

// D6 reads a pilot only when its runs are runs of the study now: the same pilot at the ceiling,
// but of the study with another learning rate (its file changed since), decides nothing: `claims
// seeds` reads no pilot there, and the ledger trains the study.
TEST(ClaimsSeeds, APilotOfAnotherExperimentDecidesNothing) {
  TempDir tmp;
  write_claim(tmp / "claims");
  const fs::path study = tmp / "out" / "claims_tiny-quick";
  write_pilot(study, {0.01, 0.01, 0.01, 0.01, 0.01});
  testing::write_bytes(study / "experiment.json",
                       tiny_experiment_json({"schemes=[\"pre\"]", "train.lr=0.02"}).dump(2));
  const auto seeds =
      run_normlab({"claims", "seeds", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "out").string(), "--ledger", (tmp / "none.json").string()});
  ASSERT_TRUE(seeds.exited && seeds.exit_code == 0) << seeds.describe();
  EXPECT_EQ(seeds.out.find("decided by its pilot"), std::string::npos) << seeds.out;
  EXPECT_NE(seeds.out.find("tiny.post_vs_pre  claims_tiny-quick: the runs there are not runs of "
                           "the study now"),
            std::string::npos)
      << seeds.out;
  const auto r = run_normlab({"claims", "run", "--tier", "quick", "--claims",
                              (tmp / "claims").string(), "--out", (tmp / "out").string()});
  EXPECT_EQ(r.out.find("decided by its pilot"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("runs ("), std::string::npos) << r.err;  // the study trained
}

// D6 on another machine: the pilot that decided its study is kept in --tables (its runs' tables,
// ledger_study.json with decided_by_pilot), and a ledger with an empty OUT uses them, trains
// nothing and decides as the first did. The pilot is a real one (pre alone, five seeds), its
// TVD set to the ceiling's 0.01. Kept tables whose pilot no longer decides the study, or whose
// runs are not the study's (another learning rate), are not used.
TEST(ClaimsSeeds, AKeptPilotDecidesItsStudyOnAnotherMachine) {
  TempDir tmp;
  const fs::path study_file = tmp / "claims_tiny_study.toml";
  const std::string text = testing::slurp(kTinyStudy);
  testing::write_bytes(study_file, text);
  std::string claim = post_vs_pre_claim();
  claim.replace(claim.find(kTinyStudy.string()), kTinyStudy.string().size(), study_file.string());
  testing::write_bytes(tmp / "claims" / "tiny.toml", kTinyPaper + claim);
  const fs::path kept = tmp / "kept" / "claims_tiny-quick";
  auto r = run_normlab({"run", study_file.string(), "--tier", "quick", "--set", "schemes=[\"pre\"]",
                        "--set", "seeds=[1, 2, 3, 4, 5]", "--out",
                        (tmp / "first" / "claims_tiny-quick").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  testing::write_bytes(tmp / "first" / "claims_tiny-quick" / "results.csv",
                       pilot_table({0.01, 0.01, 0.01, 0.01, 0.01}));
  const auto ledger = [&](const std::string& out, bool dry) {
    std::vector<std::string> args = {"claims",   "run",
                                     "--tier",   "quick",
                                     "--claims", (tmp / "claims").string(),
                                     "--out",    (tmp / out).string(),
                                     "--tables", (tmp / "kept").string()};
    if (dry) args.push_back("--dry-run");
    return run_normlab(args);
  };
  r = ledger("first", false);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  ASSERT_NE(r.out.find("study claims_tiny-quick: decided by its pilot (design rule D6)"),
            std::string::npos)
      << r.out;
  ASSERT_TRUE(fs::exists(kept / "ledger_study.json"));

  r = ledger("second", true);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("decided by its pilot (D6) in an earlier ledger run: its kept tables are "
                       "used"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("in all: 0 runs to do"), std::string::npos) << r.out;
  r = ledger("second", false);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("study claims_tiny-quick: decided by its pilot (design rule D6) in an "
                       "earlier ledger run"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err.find("runs ("), std::string::npos) << r.err;  // nothing trained
  EXPECT_FALSE(fs::exists(tmp / "second" / "claims_tiny-quick" / "runs"));
  const auto second = nlohmann::json::parse(testing::slurp(tmp / "second" / "claims.json"));
  EXPECT_EQ(second.at("claims").at(0).at("verdict"), "untestable (ceiling)") << second.dump();

  // A pilot whose TVD spreads below the ceiling does not decide the study: its 4 runs are to do.
  const std::string ceiling = testing::slurp(kept / "results.csv");
  testing::write_bytes(kept / "results.csv", pilot_table({0.10, 0.20, 0.30, 0.20, 0.10}));
  const auto expect_the_study_to_run = [&](const std::string& out) {
    const auto dry = ledger(out, true);
    ASSERT_TRUE(dry.exited && dry.exit_code == 0) << dry.describe();
    EXPECT_NE(dry.out.find("4 runs, 4 to do"), std::string::npos) << dry.out;
    EXPECT_EQ(dry.out.find("kept tables are used"), std::string::npos) << dry.out;
  };
  expect_the_study_to_run("third");

  // The study file changed (another learning rate): the pilot's runs are not its runs.
  testing::write_bytes(kept / "results.csv", ceiling);
  const size_t lr = text.find("lr = 0.01");
  ASSERT_NE(lr, std::string::npos);
  testing::write_bytes(study_file, text.substr(0, lr) + "lr = 0.02" + text.substr(lr + 9));
  expect_the_study_to_run("fourth");
}

// D6 with a grid's reference column: beside the claim D1 finds untestable, a finding that reads
// pre alone (no D1 check). The pilot holds every row it reads, so the pilot still decides the
// study and the finding is measured on the pilot's five seeds. A reference column on post, an
// arm the pilot did not run, keeps the study running.
void write_claims_with_reference(const fs::path& dir, const std::string& reference_variant) {
  testing::write_bytes(dir / "tiny.toml",
                       kTinyPaper + post_vs_pre_claim() + R"(
[[claim]]
id = "tiny.reference"
sentence = "The reference column: one arm's TVD beyond the training lengths."
study = ")" + kTinyStudy.string() +
                           R"("
terms = [
  { filter = { variant = ")" +
                           reference_variant +
                           R"(", weights = "raw", metric = "tvd", length = "beyond_training" } },
]
expect = "measure"
)");
}

TEST(ClaimsSeeds, AReferenceColumnOnThePilotsArmLetsThePilotDecide) {
  TempDir tmp;
  write_claims_with_reference(tmp / "claims", "pre");
  const fs::path study = tmp / "out" / "claims_tiny-quick";
  write_pilot(study, {0.01, 0.01, 0.01, 0.01, 0.01});
  auto r = run_normlab({"claims", "seeds", "--tier", "quick", "--claims", (tmp / "claims").string(),
                        "--out", (tmp / "out").string(), "--ledger", (tmp / "none.json").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("5, decided by its pilot (D6): no other arm runs"), std::string::npos)
      << r.out;

  r = run_normlab({"claims", "run", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "out").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("study claims_tiny-quick: decided by its pilot (design rule D6)"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(study / "runs")) << "the ledger trained an arm";
  const auto ledger = nlohmann::json::parse(testing::slurp(tmp / "out" / "claims.json"));
  for (const nlohmann::json& claim : ledger.at("claims")) {
    if (claim.at("id") == "tiny.reference") {
      EXPECT_EQ(claim.at("verdict"), "measured") << claim.dump();
      EXPECT_EQ(claim.at("values").size(), 5u) << claim.dump();
      EXPECT_NEAR(claim.at("effect").get<double>(), 0.01, 1e-12) << claim.dump();
    } else {
      EXPECT_EQ(claim.at("verdict"), "untestable (ceiling)") << claim.dump();
    }
  }
}

// The same with only the claim D1 finds untestable selected (--claim): the study's other claim
// still keeps it running, since D6 reads every claim of the ledger the study decides.
TEST(ClaimsSeeds, AReferenceColumnOnAnotherArmKeepsTheStudyRunning) {
  TempDir tmp;
  write_claims_with_reference(tmp / "claims", "post");
  write_pilot(tmp / "out" / "claims_tiny-quick", {0.01, 0.01, 0.01, 0.01, 0.01});
  for (const std::string& only : {std::string(), std::string("tiny.post_vs_pre")}) {
    std::vector<std::string> args = {"claims",   "seeds",
                                     "--tier",   "quick",
                                     "--claims", (tmp / "claims").string(),
                                     "--out",    (tmp / "out").string(),
                                     "--ledger", (tmp / "none.json").string()};
    if (!only.empty()) args.insert(args.end(), {"--claim", only});
    const auto r = run_normlab(args);
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
    EXPECT_EQ(r.out.find("decided by its pilot (D6): no other arm runs"), std::string::npos)
        << r.out;
  }
}

// A study an earlier ledger run finished (its record: ok, not by its pilot) is not decided by
// its pilot on a second run, even where D1 finds its claims untestable: every arm is there, and
// the second run decides as the first did.
TEST(ClaimsSeeds, AStudyTheLedgerFinishedIsNotDecidedByItsPilotLater) {
  TempDir tmp;
  write_claims_with_reference(tmp / "claims", "pre");
  const fs::path study = tmp / "out" / "claims_tiny-quick";
  write_pilot(study, {0.01, 0.01, 0.01, 0.01, 0.01});
  testing::write_bytes(study / "ledger_study.json",
                       R"({"command": "normlab run", "seconds": 1.0, "ok": true, "failure": ""})");
  const auto r = run_normlab({"claims", "run", "--tier", "quick", "--claims",
                              (tmp / "claims").string(), "--out", (tmp / "out").string()});
  EXPECT_EQ(r.out.find("decided by its pilot"), std::string::npos) << r.describe();
}

// D6 with the pilot kept only in --tables (its runs kept as they ended, from another machine,
// the ledger's OUT empty): the ledger restores the kept runs into OUT before D6 reads them
// (`normlab run --only-kept`), so the pilot decides the study and no other arm trains. The
// pilot is a real one (pre alone, seeds 1–5, kept with --keep), its kept TVD set to 0.01 at
// every length (the ceiling's side of ε). A dry run says so too, leaving OUT untouched.
TEST(ClaimsSeeds, APilotKeptOnlyAsRunsDecidesItsStudy) {
  TempDir tmp;
  const fs::path study_file = tmp / "claims_tiny_study.toml";
  std::string text = testing::slurp(kTinyStudy);
  const size_t seeds = text.find("seeds = [1, 2]");
  ASSERT_NE(seeds, std::string::npos);
  text.replace(seeds, 14, "seeds = [1, 2, 3, 4, 5]");
  testing::write_bytes(study_file, text);
  std::string claim = post_vs_pre_claim();
  claim.replace(claim.find(kTinyStudy.string()), kTinyStudy.string().size(), study_file.string());
  testing::write_bytes(tmp / "claims" / "tiny.toml", kTinyPaper + claim);
  const fs::path kept = tmp / "kept" / "claims_tiny-quick" / "runs";
  auto r = run_normlab({"run", study_file.string(), "--tier", "quick", "--set", "schemes=[\"pre\"]",
                        "--out", (tmp / "pilot").string(), "--keep", kept.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  int runs = 0;
  for (const fs::directory_entry& run : fs::directory_iterator(kept)) {
    ++runs;
    const fs::path eval = run.path() / "eval_raw.json";
    nlohmann::json j = nlohmann::json::parse(testing::slurp(eval));
    for (nlohmann::json& length : j.at("results")) {
      for (const char* key : {"value", "ci_low", "ci_high"}) {
        length.at("metrics").at("tvd")[key] = 0.01;
      }
    }
    testing::write_bytes(eval, j.dump(2));
  }
  ASSERT_EQ(runs, 5);
  const auto ledger = [&](bool dry) {
    std::vector<std::string> args = {"claims",   "run",
                                     "--tier",   "quick",
                                     "--claims", (tmp / "claims").string(),
                                     "--out",    (tmp / "out").string(),
                                     "--tables", (tmp / "kept").string()};
    if (dry) args.push_back("--dry-run");
    return run_normlab(args);
  };
  const fs::path study = tmp / "out" / "claims_tiny-quick";
  r = ledger(true);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("decided by its pilot (D6): no other arm would run"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("in all: 0 runs to do"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(study / "results.csv"));

  r = ledger(false);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("study claims_tiny-quick: restoring its kept runs"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("study claims_tiny-quick: decided by its pilot (design rule D6)"),
            std::string::npos)
      << r.out;
  const auto status = [&](const std::string& run) {
    return nlohmann::json::parse(testing::slurp(study / "runs" / run / "run.json"))
        .value("status", "");
  };
  EXPECT_EQ(status("pre__seed5"), "finished");
  EXPECT_EQ(status("post__seed1"), "pending") << "post trained";
  EXPECT_FALSE(fs::exists(study / "runs" / "post__seed1" / "metrics.jsonl")) << "post trained";
  const auto out = nlohmann::json::parse(testing::slurp(tmp / "out" / "claims.json"));
  EXPECT_EQ(out.at("claims").at(0).at("verdict"), "untestable (ceiling)") << out.dump();
}

}  // namespace
}  // namespace normlab
