// `normlab run --tier/--set` and `normlab claims run|list` through the command line, on the
// tiny study tests/data/claims_tiny_study.toml (Set Complement v = 8, a few hundred steps).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "normlab/store/provenance.hpp"
#include "support/cli.hpp"
#include "support/tiny_study.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::run_normlab;
using testing::TempDir;

using testing::kTinyStudy;

// One [[claim]] table with a one-term statistic, for tests that do not read its verdict;
// `more` adds keys (e.g. a set).
std::string minimal_claim(const std::string& id, const std::string& study,
                          const std::string& more = "") {
  return "[[claim]]\nid = \"" + id + "\"\nsentence = \"s\"\nstudy = \"" + study + "\"\n" + more +
         "terms = [{ filter = { variant = \"pre\" } }]\nexpect = \"negative\"\n";
}

TEST(RunTiers, UnknownTierAndMalformedSetExitTwoWithOneLine) {
  TempDir tmp;
  auto r =
      run_normlab({"run", kTinyStudy.string(), "--tier", "medium", "--out", (tmp / "o").string()});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("has no tier 'medium'; its tiers: full, quick"), std::string::npos) << r.err;

  r = run_normlab({"run", kTinyStudy.string(), "--set", "train.schedule=cosine"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("--set 'train.schedule=cosine': "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "o"));
}

// One claim end to end at the quick tier: the study runs once (two seeds), the claim is decided
// over two pairs, and a second ledger run reuses the finished runs.
TEST(ClaimsRun, DecidesAClaimEndToEndAndReusesTheStudy) {
  TempDir tmp;
  testing::write_bytes(tmp / "claims" / "tiny.toml", R"(paper = "0000.00001"
title = "A tiny paper"
[[claim]]
id = "tiny.post_vs_pre"
sentence = "Post-norm lowers TVD beyond the training lengths, compared with pre-norm."
study = ")" + kTinyStudy.string() + R"("
set = ["eval.samples=60"]
terms = [
  { weight = 1.0,  filter = { variant = "post", weights = "raw", metric = "tvd", length = "beyond_training" } },
  { weight = -1.0, filter = { variant = "pre",  weights = "raw", metric = "tvd", length = "beyond_training" } },
]
expect = "negative"
choice = "a toy: v = 8 and 300 steps"
)");
  const fs::path out = tmp / "out";
  const fs::path kept = tmp / "kept";
  const std::vector<std::string> args = {
      "claims", "run",        "--tier",   "quick",      "--claims", (tmp / "claims").string(),
      "--out",  out.string(), "--tables", kept.string()};
  const auto r = run_normlab(args);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  const fs::path study = out / "claims_tiny-quick__eval.samples=60";
  EXPECT_NE(r.out.find("study claims_tiny-quick__eval.samples=60: "), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("study claims_tiny-quick__eval.samples=60 (study 1 of 1): normlab run "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(4 to do, 0 already done)"), std::string::npos) << r.err;

  // The study ran at the quick tier with the claim's set, and recorded both.
  const auto experiment = nlohmann::json::parse(testing::slurp(study / "experiment.json"));
  EXPECT_EQ(experiment["tier"], "quick");
  EXPECT_EQ(experiment["sets"], nlohmann::json::array({"eval.samples=60"}));
  EXPECT_EQ(experiment["train"]["steps"], 300);
  EXPECT_EQ(experiment["eval"]["samples"], 60);

  const auto ledger = nlohmann::json::parse(testing::slurp(out / "claims.json"));
  ASSERT_EQ(ledger["claims"].size(), 1u);
  const auto& claim = ledger["claims"][0];
  EXPECT_EQ(claim["id"], "tiny.post_vs_pre");
  EXPECT_EQ(claim["paper"], "0000.00001");
  const std::string verdict = claim["verdict"];
  EXPECT_TRUE(verdict == "reproduced" || verdict == "contradicted" || verdict == "inconclusive" ||
              verdict == "untestable (ceiling)" || verdict == "untestable (floor)")
      << claim.dump(2);
  // Design rule D1: the baseline (pre) at each length beyond training (the study's eval
  // lengths above train.max_len), against TVD's ceiling 0 and the evaluator's tvd_chance rows.
  const auto& info = claim["informativeness"];
  ASSERT_TRUE(info.is_object()) << claim.dump(2);
  EXPECT_EQ(info["metric"], "tvd");
  const int64_t max_len = experiment["train"]["max_len"];
  size_t beyond = 0;
  for (const auto& n : experiment["eval"]["lengths"]) beyond += n.get<int64_t>() > max_len;
  ASSERT_EQ(info["lengths"].size(), beyond) << info.dump(2);
  ASSERT_GT(beyond, 0u);
  int informative = 0;
  for (const auto& l : info["lengths"]) {
    EXPECT_GT(l["length"].get<int64_t>(), max_len);
    EXPECT_EQ(l["ceiling"], 0.0);
    EXPECT_GT(l["floor"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(l["margin"].get<double>(), 0.05 * l["floor"].get<double>());
    informative += l["place"] == "informative";
  }
  EXPECT_EQ(info["informative"], informative);
  EXPECT_EQ(verdict.rfind("untestable", 0) == 0, informative < 2) << info.dump(2);
  EXPECT_NE(info["floor_rule"].get<std::string>().find("tvd_chance rows"), std::string::npos);
  EXPECT_NE(testing::slurp(study / "results.csv").find(",tvd_chance,"), std::string::npos);
  EXPECT_EQ(claim["n"], 2);  // seeds 1 and 2
  ASSERT_EQ(claim["values"].size(), 2u);
  EXPECT_EQ(claim["values"][0]["seed"], "1");
  EXPECT_LE(claim["low"].get<double>(), claim["effect"].get<double>());
  EXPECT_EQ(claim["tier"], "quick");
  EXPECT_EQ(claim["choice"], "a toy: v = 8 and 300 steps");
  const std::string command = claim["command"];
  EXPECT_NE(command.find(" --tier quick --set eval.samples=60 --out "), std::string::npos)
      << command;
  ASSERT_EQ(ledger["studies"].size(), 1u);
  EXPECT_EQ(ledger["studies"][0]["folder"], "OUT/claims_tiny-quick__eval.samples=60");
  EXPECT_EQ(testing::slurp(out / "claims.json").find(tmp.path().string()), std::string::npos);
  EXPECT_TRUE(ledger["studies"][0]["ok"]);
  EXPECT_GT(ledger["studies"][0]["seconds"].get<double>(), 0.0);
  const std::string md = testing::slurp(out / "claims.md");
  EXPECT_NE(md.find("| tiny.post_vs_pre | 0000.00001 | " + verdict + " | "), std::string::npos)
      << md;
  // The first screen: the paper's answer (a paragraph by verdict, then its claims), before the
  // table of all claims.
  const size_t answer = md.find("## A tiny paper (arXiv 0000.00001)\n\n");
  ASSERT_NE(answer, std::string::npos) << md;
  EXPECT_LT(answer, md.find("## All claims")) << md;
  EXPECT_NE(md.find("| tiny.post_vs_pre | " + verdict + " | ", answer), std::string::npos) << md;
  const char* group = verdict == "reproduced"     ? "**Holds here** (1): Post-norm lowers TVD"
                      : verdict == "contradicted" ? "**Does not hold here**"
                      : verdict == "inconclusive" ? "**Open** (1)"
                                                  : "**Cannot be tested here** (1)";
  EXPECT_NE(md.find(group, answer), std::string::npos) << md;

  // Again: nothing is retrained (the final checkpoints are not rewritten) and the verdict stays.
  const fs::path weights = study / "runs" / "post__seed1" / "final";
  ASSERT_TRUE(fs::exists(weights));
  const auto written = fs::last_write_time(weights);
  // The first record as a binary before invocation lists wrote it: it still counts.
  testing::write_bytes(study / "ledger_study.json",
                       R"({"command": "c", "seconds": 1000.0, "ok": true, "failure": ""})");
  const auto again = run_normlab(args);
  ASSERT_TRUE(again.exited && again.exit_code == 0) << again.describe();
  EXPECT_NE(again.err.find("(0 to do, 4 already done)"), std::string::npos) << again.err;
  EXPECT_EQ(fs::last_write_time(weights), written);
  const auto second = nlohmann::json::parse(testing::slurp(out / "claims.json"));
  EXPECT_EQ(second["claims"][0]["values"], claim["values"]);

  // `claims list` shows the verdict from a ledger file, "not run" without one.
  auto list = run_normlab({"claims", "list", "--claims", (tmp / "claims").string(), "--ledger",
                           (out / "claims.json").string()});
  ASSERT_EQ(list.exit_code, 0) << list.describe();
  EXPECT_NE(list.out.find("tiny.post_vs_pre  0000.00001  " + verdict), std::string::npos)
      << list.out;
  list = run_normlab({"claims", "list", "--claims", (tmp / "claims").string(), "--ledger",
                      (tmp / "none.json").string()});
  EXPECT_NE(list.out.find("not run"), std::string::npos) << list.out;
  // The fourth verdict, as claims.json gives it, widens the verdict column.
  testing::write_bytes(
      tmp / "untestable.json",
      R"j({"claims": [{"id": "tiny.post_vs_pre", "verdict": "untestable (floor)"}]})j");
  list = run_normlab({"claims", "list", "--claims", (tmp / "claims").string(), "--ledger",
                      (tmp / "untestable.json").string()});
  EXPECT_NE(list.out.find("tiny.post_vs_pre  0000.00001  untestable (floor)  Post-norm lowers"),
            std::string::npos)
      << list.out;

  // The kept tables alone decide the claim again, with the record of the run that made them.
  const fs::path kept_study = kept / study.filename();
  for (const char* f : {"experiment.json", "results.csv", "summary.md", "ledger_study.json"}) {
    EXPECT_TRUE(fs::exists(kept_study / f)) << f;
  }
  EXPECT_FALSE(fs::exists(kept_study / "runs"));
  EXPECT_FALSE(fs::exists(kept_study / "results.sqlite"));
  const auto decided =
      run_normlab({"claims", "run", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", kept.string(), "--decide-only"});
  ASSERT_TRUE(decided.exited && decided.exit_code == 0) << decided.describe();
  EXPECT_EQ(decided.err.find("study "), std::string::npos) << decided.err;  // nothing started
  const auto from_tables = nlohmann::json::parse(testing::slurp(kept / "claims.json"));
  EXPECT_EQ(from_tables["claims"][0]["verdict"], claim["verdict"]);
  EXPECT_EQ(from_tables["claims"][0]["values"], claim["values"]);
  EXPECT_EQ(from_tables["claims"][0]["command"], claim["command"]);
  EXPECT_EQ(from_tables["studies"][0]["seconds"], second["studies"][0]["seconds"]);
  // The record lists both ledger invocations; its wall time is their sum.
  const auto record = nlohmann::json::parse(testing::slurp(kept_study / "ledger_study.json"));
  ASSERT_EQ(record["invocations"].size(), 2u) << record.dump(2);
  EXPECT_EQ(record["invocations"][0]["seconds"], 1000.0);
  EXPECT_DOUBLE_EQ(record["seconds"].get<double>(),
                   record["invocations"][0]["seconds"].get<double>() +
                       record["invocations"][1]["seconds"].get<double>());
  EXPECT_TRUE(record["invocations"][1]["ok"]);
  // Each invocation names the build that ran it (the test's own: one source tree).
  EXPECT_EQ(record["invocations"][1]["git_commit"], build_git_commit()) << record.dump(2);
  EXPECT_EQ(from_tables["decide_only"], true);
  EXPECT_NE(testing::slurp(kept / "claims.md").find("--decide-only"), std::string::npos);
}

// Design rule D3's order (docs/claims.md): a pilot of the baseline arm alone, run into the
// study's own folder, is reused by the ledger's run of the whole study.
TEST(ClaimsRun, ThePilotsRunsAreTheStudysOwn) {
  TempDir tmp;
  testing::write_bytes(
      tmp / "claims" / "tiny.toml",
      "paper = \"0000.00005\"\n" + minimal_claim("tiny.pilot", kTinyStudy.string()));
  const fs::path out = tmp / "out";
  auto r = run_normlab({"run", kTinyStudy.string(), "--tier", "quick", "--set", "schemes=[\"pre\"]",
                        "--out", (out / "claims_tiny-quick").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.err.find("2 runs (2 to do, 0 already done)"), std::string::npos) << r.err;
  r = run_normlab({"claims", "run", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", out.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.err.find("4 runs (2 to do, 2 already done)"), std::string::npos) << r.err;
}

// The same with the pilot's runs kept where --tables keeps the study's (docs/claims.md), and
// its results folder lost with its machine: the ledger restores the pilot's runs, trains the
// other arm, and removes the kept runs once the study's tables are copied.
TEST(ClaimsRun, KeptRunsOutliveTheResultsFolder) {
  TempDir tmp;
  testing::write_bytes(
      tmp / "claims" / "tiny.toml",
      "paper = \"0000.00005\"\n" + minimal_claim("tiny.pilot", kTinyStudy.string()));
  const fs::path tables = tmp / "tables";
  const fs::path kept = tables / "claims_tiny-quick" / "runs";
  auto r = run_normlab({"run", kTinyStudy.string(), "--tier", "quick", "--set", "schemes=[\"pre\"]",
                        "--out", (tmp / "lost").string(), "--keep", kept.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_TRUE(fs::is_regular_file(kept / "pre__seed2" / "run.json"));
  fs::remove_all(tmp / "lost");
  r = run_normlab({"claims", "run", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "out").string(), "--tables", tables.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  // Restored first (for design rule D6 to read), then the other arm trained.
  EXPECT_NE(r.err.find("4 runs (2 done, 2 of them restored from "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("4 runs (2 to do, 2 already done)"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_regular_file(tables / "claims_tiny-quick" / "results.csv"));
  EXPECT_FALSE(fs::exists(kept));
  // The recorded command is the study's, without the machine's folder of kept runs.
  const auto record =
      nlohmann::json::parse(testing::slurp(tables / "claims_tiny-quick" / "ledger_study.json"));
  EXPECT_EQ(record["command"].get<std::string>().find("--keep"), std::string::npos) << record;
}

// Runs another study keeps with the same settings (a grid's pilot kept where --tables keeps
// that study's runs) are copied into this study instead of trained (`normlab run --reuse`); the
// recorded command stays the study's own.
TEST(ClaimsRun, RunsAnotherStudyKeepsWithTheSameSettingsAreReused) {
  TempDir tmp;
  testing::write_bytes(
      tmp / "claims" / "tiny.toml",
      "paper = \"0000.00005\"\n" + minimal_claim("tiny.shared", kTinyStudy.string()));
  const fs::path tables = tmp / "tables";
  auto r = run_normlab({"run", kTinyStudy.string(), "--tier", "quick", "--set", "schemes=[\"pre\"]",
                        "--out", (tmp / "other").string(), "--keep",
                        (tables / "another_study-quick" / "runs").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  r = run_normlab({"claims", "run", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "out").string(), "--tables", tables.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.err.find("4 runs (2 to do, 2 already done, 2 of them another study's runs with "
                       "the same settings (--reuse))"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(tmp / "out" / "claims_tiny-quick" / "runs" / "pre__seed1" / "final"));
  const auto record =
      nlohmann::json::parse(testing::slurp(tables / "claims_tiny-quick" / "ledger_study.json"));
  EXPECT_EQ(record["command"].get<std::string>().find("--reuse"), std::string::npos) << record;
}

// A study that finished in an earlier ledger run keeps only its tables; a ledger with an empty
// OUT (another machine) uses them instead of training the study again, and decides the same.
// A changed study (another seed list) is run.
TEST(ClaimsRun, FinishedStudyIsReusedFromItsKeptTables) {
  TempDir tmp;
  const fs::path study = tmp / "claims_tiny_study.toml";
  const std::string text = testing::slurp(kTinyStudy);
  testing::write_bytes(study, text);
  testing::write_bytes(tmp / "claims" / "tiny.toml",
                       "paper = \"0000.00006\"\n" + minimal_claim("tiny.reused", study.string()));
  const fs::path tables = tmp / "tables";
  const auto ledger = [&](const std::string& out) {
    return run_normlab({"claims", "run", "--tier", "quick", "--claims", (tmp / "claims").string(),
                        "--out", (tmp / out).string(), "--tables", tables.string()});
  };
  auto r = ledger("first");
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  const auto first = nlohmann::json::parse(testing::slurp(tmp / "first" / "claims.json"));
  EXPECT_FALSE(fs::exists(tables / "claims_tiny-quick" / "runs"));

  r = ledger("second");
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("study claims_tiny-quick: finished in an earlier ledger run; its kept "
                       "tables "),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err.find("runs ("), std::string::npos) << r.err;  // nothing trained
  EXPECT_FALSE(fs::exists(tmp / "second" / "claims_tiny-quick" / "runs"));
  const auto second = nlohmann::json::parse(testing::slurp(tmp / "second" / "claims.json"));
  EXPECT_EQ(second["claims"][0]["verdict"], first["claims"][0]["verdict"]);
  EXPECT_EQ(second["claims"][0]["effect"], first["claims"][0]["effect"]);

  // Kept by an older normlab, before the models had a dropout field: the same experiment.
  const fs::path kept_experiment = tables / "claims_tiny-quick" / "experiment.json";
  auto older = nlohmann::json::parse(testing::slurp(kept_experiment));
  for (nlohmann::json& v : older.at("variants")) ASSERT_EQ(v.at("model").erase("dropout"), 1u);
  testing::write_bytes(kept_experiment, older.dump(2));
  r = ledger("older");
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("study claims_tiny-quick: finished in an earlier ledger run"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err.find("runs ("), std::string::npos) << r.err;

  // The study file changed (another learning rate): its kept tables are not that experiment.
  const size_t lr = text.find("lr = 0.01");
  ASSERT_NE(lr, std::string::npos);
  testing::write_bytes(study, text.substr(0, lr) + "lr = 0.02" + text.substr(lr + 9));
  r = ledger("third");
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_EQ(r.out.find("finished in an earlier ledger run"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("runs ("), std::string::npos) << r.err;
}

// --dry-run trains and writes nothing: the study's runs to do and an estimate before the ledger
// has run it; "finished" in the folder after, or its runs all ended without the ledger's
// record; the kept tables named in another folder.
TEST(ClaimsRun, DryRunListsWhatIsLeftAndWritesNothing) {
  TempDir tmp;
  testing::write_bytes(tmp / "claims" / "tiny.toml",
                       "paper = \"0000.00009\"\n" + minimal_claim("tiny.dry", kTinyStudy.string()));
  const fs::path tables = tmp / "tables";
  const auto ledger = [&](const std::string& out, bool dry) {
    std::vector<std::string> args = {"claims",   "run",
                                     "--tier",   "quick",
                                     "--claims", (tmp / "claims").string(),
                                     "--out",    (tmp / out).string(),
                                     "--tables", tables.string()};
    if (dry) args.push_back("--dry-run");
    return run_normlab(args);
  };
  auto r = ledger("first", true);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("claims_tiny-quick"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 runs, 4 to do: about "), std::string::npos) << r.out;  // 2 × 2
  EXPECT_NE(r.out.find("in all: 4 runs to do, about "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("at a time, the longest run "), std::string::npos) << r.out;  // the study's
  EXPECT_NE(r.out.find("; the longest run "), std::string::npos) << r.out;  // over every study
  EXPECT_FALSE(fs::exists(tmp / "first"));
  EXPECT_FALSE(fs::exists(tables));

  r = ledger("first", false);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  r = ledger("first", true);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("claims_tiny-quick"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" finished\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("in all: 0 runs to do"), std::string::npos) << r.out;
  // Without the ledger's record the study's own runs say it: all four have ended.
  fs::remove(tmp / "first" / "claims_tiny-quick" / "ledger_study.json");
  r = run_normlab({"claims", "run", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "first").string(), "--dry-run"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("4 runs, 0 to do\n"), std::string::npos) << r.out;
  // Runs kept by `normlab run --keep` where the ledger's --tables keeps them count as done.
  r = run_normlab({"run", kTinyStudy.string(), "--tier", "quick", "--out", (tmp / "pilot").string(),
                   "--keep", (tmp / "kept" / "claims_tiny-quick" / "runs").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  r = run_normlab({"claims", "run", "--tier", "quick", "--claims", (tmp / "claims").string(),
                   "--out", (tmp / "third").string(), "--tables", (tmp / "kept").string(),
                   "--dry-run"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("4 runs, 0 to do\n"), std::string::npos) << r.out;
  r = ledger("second", true);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("finished in an earlier ledger run: its kept tables are used"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(tmp / "second"));
}

// --decide-only on a folder without the study: the claim is "not run", nothing is trained.
TEST(ClaimsRun, DecideOnlyWithoutTheStudySaysNotRun) {
  TempDir tmp;
  testing::write_bytes(
      tmp / "claims" / "tiny.toml",
      "paper = \"0000.00003\"\n" + minimal_claim("tiny.absent", kTinyStudy.string()));
  const fs::path out = tmp / "out";
  const auto r = run_normlab({"claims", "run", "--tier", "full", "--claims",
                              (tmp / "claims").string(), "--out", out.string(), "--decide-only"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("not run       tiny.absent"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out / "claims_tiny-full"));
  const auto ledger = nlohmann::json::parse(testing::slurp(out / "claims.json"));
  EXPECT_EQ(ledger["claims"][0]["verdict"], "not run");
  EXPECT_EQ(ledger["claims"][0]["reason"],
            "OUT/claims_tiny-full has no ledger_study.json: the study has not run there");
  EXPECT_EQ(ledger["studies"][0]["status"], "not run");
  EXPECT_NE(
      testing::slurp(out / "claims.md").find("| tiny.absent | 0000.00003 | not run | – | 0 |"),
      std::string::npos);
  for (const char* file : {"claims.json", "claims.md"}) {
    EXPECT_EQ(testing::slurp(out / file).find(tmp.path().string()), std::string::npos) << file;
  }

  const auto both = run_normlab({"claims", "run", "--claims", (tmp / "claims").string(), "--out",
                                 out.string(), "--decide-only", "--jobs", "2"});
  EXPECT_EQ(both.exit_code, 2) << both.describe();
}

// A claim that cannot be decided from its study's folder (here: a record, no results.csv) is an
// error whose reason names the folder as OUT/..., not as this machine's path.
TEST(ClaimsRun, AnErrorNamesTheFolderAsOut) {
  TempDir tmp;
  testing::write_bytes(
      tmp / "claims" / "tiny.toml",
      "paper = \"0000.00005\"\n" + minimal_claim("tiny.broken", kTinyStudy.string()));
  const fs::path out = tmp / "out";
  testing::write_bytes(
      out / "claims_tiny-full" / "ledger_study.json",
      R"({"command": "normlab run x", "seconds": 1.0, "ok": true, "failure": ""})");
  const auto r = run_normlab({"claims", "run", "--tier", "full", "--claims",
                              (tmp / "claims").string(), "--out", out.string(), "--decide-only"});
  ASSERT_TRUE(r.exited && r.exit_code == 1) << r.describe();
  const auto ledger = nlohmann::json::parse(testing::slurp(out / "claims.json"));
  EXPECT_EQ(ledger["claims"][0]["verdict"], "error");
  const std::string reason = ledger["claims"][0]["reason"];
  EXPECT_NE(reason.find("OUT/claims_tiny-full/"), std::string::npos) << reason;
  for (const char* file : {"claims.json", "claims.md"}) {
    EXPECT_EQ(testing::slurp(out / file).find(tmp.path().string()), std::string::npos) << file;
  }
}

TEST(ClaimsRun, FailedStudyExitsOneAndSaysWhich) {
  TempDir tmp;
  testing::write_bytes(tmp / "claims" / "bad.toml",
                       "paper = \"0000.00002\"\n" + minimal_claim("bad.study", kTinyStudy.string(),
                                                                  "set = [\"train.stpes=3\"]\n"));
  const auto r = run_normlab(
      {"claims", "run", "--claims", (tmp / "claims").string(), "--out", (tmp / "out").string()});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("study failed: " + kTinyStudy.string()), std::string::npos) << r.err;
  const auto ledger = nlohmann::json::parse(testing::slurp(tmp / "out" / "claims.json"));
  EXPECT_EQ(ledger["claims"][0]["verdict"], "study failed");
}

TEST(ClaimsRun, UnknownPaperIsAUsageError) {
  TempDir tmp;
  const auto r = run_normlab({"claims", "run", "--paper", "9999.99999", "--claims",
                              (fs::path(NORMLAB_SOURCE_DIR) / "claims").string(), "--out",
                              (tmp / "out").string()});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find("--paper 9999.99999: no such paper"), std::string::npos) << r.err;
}

// The shipped ledger reads without error and its ids are unique.
// A finding beside a claim of the same paper: measured (or untestable), in a section of its own
// in claims.md, with kind "finding" in claims.json, under its own line in `claims list`, and in
// the report's Findings table.
TEST(ClaimsRun, FindingsHaveTheirOwnSection) {
  TempDir tmp;
  const std::string terms = R"(terms = [
  { weight = 1.0,  filter = { variant = "post", weights = "raw", metric = "tvd", length = "beyond_training" } },
  { weight = -1.0, filter = { variant = "pre",  weights = "raw", metric = "tvd", length = "beyond_training" } },
]
)";
  testing::write_bytes(tmp / "claims" / "tiny.toml",
                       "paper = \"0000.00005\"\ntitle = \"A tiny paper\"\n[[claim]]\nid = "
                       "\"tiny.claim\"\nsentence = \"Post-norm lowers TVD.\"\nstudy = \"" +
                           kTinyStudy.string() + "\"\n" + terms +
                           "expect = \"negative\"\n[[claim]]\nid = \"tiny.finding\"\nsentence = "
                           "\"How much post-norm changes TVD beyond training.\"\nstudy = \"" +
                           kTinyStudy.string() + "\"\n" + terms +
                           "expect = \"measure\"\ngrid = { row = \"tiny task\", column = "
                           "\"post - pre\" }\n");
  const fs::path out = tmp / "out";
  const auto r = run_normlab({"claims", "run", "--tier", "quick", "--claims",
                              (tmp / "claims").string(), "--out", out.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  const auto ledger = nlohmann::json::parse(testing::slurp(out / "claims.json"));
  ASSERT_EQ(ledger["claims"].size(), 2u);
  EXPECT_EQ(ledger["claims"][0]["kind"], "claim");
  const auto& finding = ledger["claims"][1];
  EXPECT_EQ(finding["kind"], "finding");
  EXPECT_EQ(finding["expect"], "measure");
  const std::string verdict = finding["verdict"];
  EXPECT_TRUE(verdict == "measured" || verdict.rfind("untestable", 0) == 0) << finding.dump(2);
  EXPECT_EQ(finding["n"], 2);
  // Both read the same rows: the same effect.
  EXPECT_EQ(finding["effect"], ledger["claims"][0]["effect"]);
  EXPECT_EQ(finding["grid"]["row"], "tiny task");
  EXPECT_EQ(finding["grid"]["column"], "post - pre");
  EXPECT_TRUE(ledger["claims"][0]["grid"].is_null());

  const std::string md = testing::slurp(out / "claims.md");
  const size_t findings = md.find("**Findings**");
  ASSERT_NE(findings, std::string::npos) << md;
  const size_t row = md.find("| tiny.finding | How much post-norm changes TVD beyond training | ");
  EXPECT_GT(row, findings) << md;
  EXPECT_LT(md.find("| tiny.claim | "), findings) << md;
  // The grid: one row, one column, the cell the verdict or the effect.
  const size_t grid = md.find("**Findings as a grid**");
  ASSERT_GT(grid, row) << md;
  EXPECT_NE(md.find("|  | post - pre |\n| --- | --- |\n| tiny task | ", grid), std::string::npos)
      << md;

  const auto list = run_normlab({"claims", "list", "--claims", (tmp / "claims").string(),
                                 "--ledger", (out / "claims.json").string()});
  ASSERT_EQ(list.exit_code, 0) << list.describe();
  const size_t heading = list.out.find("findings (measured, no side expected):\n");
  ASSERT_NE(heading, std::string::npos) << list.out;
  EXPECT_GT(list.out.find("tiny.finding"), heading) << list.out;
  EXPECT_LT(list.out.find("tiny.claim"), heading) << list.out;
  EXPECT_NE(list.out.find(verdict), std::string::npos) << list.out;

  ASSERT_EQ(run_normlab({"report", out.string()}).exit_code, 0);
  const std::string html = testing::slurp(out / "report.html");
  EXPECT_NE(html.find(">Findings</h3>"), std::string::npos);
  EXPECT_NE(html.find(">Findings as a grid (arXiv 0000.00005)</h3>"), std::string::npos);
  EXPECT_NE(html.find("tiny task"), std::string::npos);
}

TEST(ClaimsList, ShippedLedgerReads) {
  const auto r =
      run_normlab({"claims", "list", "--claims", (fs::path(NORMLAB_SOURCE_DIR) / "claims").string(),
                   "--ledger", "/nonexistent.json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("2510.08341"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2603.15031"), std::string::npos) << r.out;
}

// Without --ledger, the committed full-tier ledgers are read: every paper's own while there is
// no docs/claims.json; a claim of a paper whose full tier is committed shows its verdict.
TEST(ClaimsList, DefaultReadsTheCommittedPaperLedgers) {
  TempDir tmp;
  testing::write_bytes(tmp / "docs" / "claims-full-0000.00004.json",
                       R"({"claims": [{"id": "tiny.listed", "verdict": "contradicted"}]})");
  testing::write_bytes(tmp / "claims" / "tiny.toml", "paper = \"0000.00004\"\n" +
                                                         minimal_claim("tiny.listed", "x.toml") +
                                                         minimal_claim("tiny.unlisted", "x.toml"));
  auto r = run_normlab({"claims", "list"}, {}, {}, tmp.path().string());
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("tiny.listed    0000.00004  contradicted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiny.unlisted  0000.00004  not run"), std::string::npos) << r.out;

  // docs/claims.json, the whole ledger, replaces the papers' own once it exists.
  testing::write_bytes(tmp / "docs" / "claims.json",
                       R"({"claims": [{"id": "tiny.unlisted", "verdict": "reproduced"}]})");
  r = run_normlab({"claims", "list"}, {}, {}, tmp.path().string());
  EXPECT_NE(r.out.find("tiny.listed    0000.00004  not run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiny.unlisted  0000.00004  reproduced"), std::string::npos) << r.out;
}

// Terminal escapes in a claims file or a ledger are listed as text (\x1b), never sent to the
// terminal; UTF-8 stays as it is.
TEST(ClaimsList, ControlBytesAreListedAsText) {
  TempDir tmp;
  testing::write_bytes(tmp / "docs" / "claims.json",
                       R"({"claims": [{"id": "tiny.a", "verdict": "reproduced\u001b[2J"}]})");
  testing::write_bytes(tmp / "claims" / "tiny.toml",
                       "paper = \"0000.00004\"\n[[claim]]\nid = \"tiny.a\"\n"
                       "sentence = \"s \\u001b[31mred\\u001b[0m ≥ 0\"\nstudy = \"x.toml\"\n"
                       "terms = [{ filter = { variant = \"pre\" } }]\nexpect = \"negative\"\n");
  const auto r = run_normlab({"claims", "list"}, {}, {}, tmp.path().string());
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reproduced\\x1b[2J"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("s \\x1b[31mred\\x1b[0m ≥ 0"), std::string::npos) << r.out;
}

// A damaged ledger is named in one line without the JSON library's own text.
TEST(ClaimsList, DamagedLedgerIsOneLineWithoutLibraryText) {
  TempDir tmp;
  std::ofstream(tmp / "claims.json") << R"({"claims": [{"id": 3, "verdict": "x"}]})";
  const auto r =
      run_normlab({"claims", "list", "--claims", std::string(NORMLAB_SOURCE_DIR) + "/claims",
                   "--ledger", (tmp / "claims.json").string()});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
  EXPECT_NE(r.err.find("not a claims ledger"), std::string::npos) << r.describe();
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.describe();
}

// Killing `normlab claims run` (SIGKILL: no handler runs) ends the study it started: its
// `normlab run` child dies with it and frees the study folder's lock with the runs unfinished.
// Left running, the child would hold the lock for the whole 2·10^6-step run, and the blocking
// lock below would wait until the kill guard (alarm) ends the test as a failure.
TEST(ClaimsRun, AKilledLedgerLeavesNoStudyRunning) {
  TempDir tmp;
  testing::write_bytes(tmp / "claims" / "tiny.toml",
                       "paper = \"0000.00001\"\ntitle = \"A tiny paper\"\n" +
                           minimal_claim("tiny.long", kTinyStudy.string(),
                                         "set = [\"train.steps=2000000\", \"seeds=[1]\", "
                                         "\"schemes=[\\\"pre\\\"]\"]\n"));
  int out_pipe[2];
  ASSERT_EQ(::pipe(out_pipe), 0);
  const std::string binary = NORMLAB_BINARY, claims_dir = (tmp / "claims").string(),
                    out = (tmp / "out").string();
  const pid_t ledger = ::fork();
  ASSERT_GE(ledger, 0);
  if (ledger == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(out_pipe[1], 2);
    ::close(out_pipe[0]);
    ::execl(binary.c_str(), binary.c_str(), "claims", "run", "--tier", "quick", "--claims",
            claims_dir.c_str(), "--out", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::alarm(300);  // the kill guard
  // The study's first run has started once the runner says so (a blocking read, no timing).
  std::string said;
  char buffer[256];
  ssize_t n;
  while (said.find("started") == std::string::npos &&
         (n = ::read(out_pipe[0], buffer, sizeof buffer)) > 0) {
    said.append(buffer, static_cast<size_t>(n));
  }
  ASSERT_NE(said.find("started"), std::string::npos) << said;
  ASSERT_EQ(::kill(ledger, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(ledger, &status, 0), ledger);
  fs::path study;
  for (const fs::directory_entry& e : fs::directory_iterator(tmp / "out")) {
    if (e.is_directory()) study = e.path();
  }
  ASSERT_FALSE(study.empty());
  const int lock = ::open((study / ".lock").c_str(), O_RDWR);
  ASSERT_GE(lock, 0);
  EXPECT_EQ(::flock(lock, LOCK_EX), 0);  // blocks while a `normlab run` holds the folder
  ::close(lock);
  ::close(out_pipe[0]);
  ::alarm(0);
  EXPECT_FALSE(fs::exists(study / "results.csv")) << "the study ran to its end";
}

}  // namespace
}  // namespace normlab
