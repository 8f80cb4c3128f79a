// Claims decided from synthetic result tables written here, whose verdicts are known: the
// filters, the reductions, the pairing, and the errors that keep a claim from passing on
// missing data. Also the strict reading of claims files.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "normlab/base/errors.hpp"
#include "normlab/claims/claims_file.hpp"
#include "normlab/claims/evaluate.hpp"
#include "support/claim_file.hpp"
#include "support/cli.hpp"

namespace normlab::claims {
namespace {

using normlab::testing::read_one_claim;
using normlab::testing::TempDir;
using normlab::testing::write_bytes;

// results.csv rows "variant,seed,length,metric,value" and experiment.json with max_len 4.
void write_study(const TempDir& tmp, const std::string& rows) {
  write_bytes(tmp / "study" / "results.csv", "variant,seed,length,metric,value\n" + rows);
  write_bytes(tmp / "study" / "experiment.json", R"({"train": {"min_len": 1, "max_len": 4}})");
}

// post − pre per seed, at length 8.
const char* kDifference = R"(terms = [
  { weight = 1.0, filter = { variant = "post", metric = "tvd", length = 8 } },
  { weight = -1.0, filter = { variant = "pre", metric = "tvd", length = 8 } },
]
)";

std::string pre_post_rows(const std::vector<double>& pre, const std::vector<double>& post) {
  std::string rows;
  for (size_t i = 0; i < pre.size(); ++i) {
    rows += fmt::format("pre,{},8,tvd,{}\npost,{},8,tvd,{}\n", i + 1, pre[i], i + 1, post[i]);
    rows += fmt::format("pre,{},8,accuracy,0.5\npost,{},8,accuracy,0.5\n", i + 1, i + 1);
  }
  return rows;
}

TEST(Evaluate, ClearlyNegativeDifferenceIsReproduced) {
  TempDir tmp;
  write_study(tmp, pre_post_rows({2.0, 2.1, 1.9}, {1.0, 1.0, 1.0}));
  const ClaimEvaluation e = evaluate_claim(
      read_one_claim(tmp, std::string(kDifference) + "expect = \"negative\"\n"), tmp / "study");
  ASSERT_EQ(e.pairs.size(), 3u);
  EXPECT_EQ(e.pairs[0].pair, "1");
  EXPECT_DOUBLE_EQ(e.pairs[0].value, -1.0);
  EXPECT_NEAR(e.pairs[1].value, -1.1, 1e-12);
  EXPECT_NEAR(e.statistic.effect, -1.0, 1e-12);
  EXPECT_EQ(e.decision.verdict, Verdict::reproduced) << e.decision.reason;
}

TEST(Evaluate, OppositeSignIsContradicted) {
  TempDir tmp;
  write_study(tmp, pre_post_rows({2.0, 2.1, 1.9}, {1.0, 1.0, 1.0}));
  const ClaimEvaluation e = evaluate_claim(
      read_one_claim(tmp, std::string(kDifference) + "expect = \"positive\"\n"), tmp / "study");
  EXPECT_EQ(e.decision.verdict, Verdict::contradicted) << e.decision.reason;
}

TEST(Evaluate, MixedSignsAreInconclusive) {
  TempDir tmp;
  write_study(tmp, pre_post_rows({2.0, 1.0, 1.5}, {1.0, 2.0, 1.0}));
  const ClaimEvaluation e = evaluate_claim(
      read_one_claim(tmp, std::string(kDifference) + "expect = \"negative\"\n"), tmp / "study");
  EXPECT_EQ(e.decision.verdict, Verdict::inconclusive) << e.decision.reason;
  EXPECT_NE(e.decision.reason.find("contains 0"), std::string::npos) << e.decision.reason;
}

// A finding (expect = "measure") has no side: mixed signs are measured, with their mean and
// interval; too few pairs stay inconclusive.
TEST(Evaluate, FindingIsMeasuredWithItsInterval) {
  TempDir tmp;
  write_study(tmp, pre_post_rows({2.0, 1.0, 1.5}, {1.0, 2.0, 1.0}));
  const Claim finding = read_one_claim(tmp, std::string(kDifference) + "expect = \"measure\"\n");
  EXPECT_TRUE(finding.finding());
  EXPECT_EQ(finding.kind(), "finding");
  const ClaimEvaluation e = evaluate_claim(finding, tmp / "study");
  EXPECT_EQ(e.decision.verdict, Verdict::measured) << e.decision.reason;
  EXPECT_EQ(to_string(e.decision.verdict), "measured");
  EXPECT_NEAR(e.statistic.effect, (-1.0 + 1.0 - 0.5) / 3, 1e-12);
  EXPECT_LT(e.statistic.low, e.statistic.effect);
  EXPECT_NE(e.decision.reason.find("measured over 3 pairs"), std::string::npos)
      << e.decision.reason;
  write_study(tmp, pre_post_rows({2.0}, {1.0}));
  EXPECT_EQ(evaluate_claim(finding, tmp / "study").decision.verdict, Verdict::inconclusive);
}

TEST(Evaluate, TooFewPairs) {
  TempDir tmp;
  write_study(tmp, pre_post_rows({2.0, 2.1, 1.9}, {1.0, 1.0, 1.0}));
  const ClaimEvaluation e = evaluate_claim(
      read_one_claim(tmp, std::string(kDifference) + "expect = \"negative\"\nmin_pairs = 4\n"),
      tmp / "study");
  EXPECT_EQ(e.statistic.n, 3);
  EXPECT_EQ(e.decision.verdict, Verdict::inconclusive);
  EXPECT_EQ(e.decision.reason, "3 pair(s), fewer than min_pairs = 4");
}

// pre's TVD per seed: 0.50, 0.52, 0.48 → mean 0.5, interval 0.5 ± 4.303 · 0.02/√3 ≈ [0.45, 0.55].
TEST(Evaluate, BandInsideDisjointAndOverlapping) {
  TempDir tmp;
  write_study(tmp, pre_post_rows({0.50, 0.52, 0.48}, {1.0, 1.0, 1.0}));
  const std::string term =
      "terms = [{ filter = { variant = \"pre\", metric = \"tvd\", length = 8 } }]\n";
  const auto verdict = [&](const std::string& band) {
    return evaluate_claim(read_one_claim(tmp, term + "expect = { band = " + band + " }\n"),
                          tmp / "study")
        .decision.verdict;
  };
  EXPECT_EQ(verdict("[0.4, 0.6]"), Verdict::reproduced);
  EXPECT_EQ(verdict("[0.6, 0.9]"), Verdict::contradicted);
  EXPECT_EQ(verdict("[0.5, 0.9]"), Verdict::inconclusive);
}

TEST(Evaluate, TermMatchingNothingIsAnErrorNamingClaimAndFilter) {
  TempDir tmp;
  write_study(tmp, pre_post_rows({2.0, 2.1, 1.9}, {1.0, 1.0, 1.0}));
  std::string terms = kDifference;
  terms.replace(terms.find("\"post\""), 6, "\"peri\"");
  try {
    evaluate_claim(read_one_claim(tmp, terms + "expect = \"negative\"\n"), tmp / "study");
    FAIL() << "a claim must not pass on missing data";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("claim 'c'"), std::string::npos) << m;
    EXPECT_NE(m.find("variant=peri"), std::string::npos) << m;
    EXPECT_NE(m.find("matches no rows"), std::string::npos) << m;
  }
}

TEST(Evaluate, TermMissingForOnePairIsAnError) {
  TempDir tmp;
  std::string rows = pre_post_rows({2.0, 2.1, 1.9}, {1.0, 1.0, 1.0});
  rows.erase(rows.find("post,3,8,tvd,1\n"), 15);
  write_study(tmp, rows);
  try {
    evaluate_claim(read_one_claim(tmp, std::string(kDifference) + "expect = \"negative\"\n"),
                   tmp / "study");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("matches no rows for seed = 3"), std::string::npos)
        << e.what();
  }
}

// drop_incomplete_pairs: seed 3 has no post row (its run diverged): left out and named, the
// others decided; a term with no rows at all leaves no pairs, so too few for a verdict.
TEST(Evaluate, IncompletePairsDroppedWhenTheClaimSaysSo) {
  TempDir tmp;
  std::string rows = pre_post_rows({2.0, 2.1, 1.9}, {1.0, 1.0, 1.0});
  rows.erase(rows.find("post,3,8,tvd,1\n"), 15);
  write_study(tmp, rows);
  const ClaimEvaluation e = evaluate_claim(
      read_one_claim(
          tmp, std::string(kDifference) + "expect = \"negative\"\ndrop_incomplete_pairs = true\n"),
      tmp / "study");
  ASSERT_EQ(e.pairs.size(), 2u);
  EXPECT_EQ(e.pairs[0].pair, "1");
  EXPECT_EQ(e.pairs[1].pair, "2");
  EXPECT_EQ(e.dropped, (std::vector<std::string>{"3"}));
  EXPECT_EQ(e.statistic.n, 2);
  EXPECT_NE(e.decision.reason.find("left out, a term having no rows for them (e.g. a run that "
                                   "diverged): seed 3"),
            std::string::npos)
      << e.decision.reason;

  std::string terms = kDifference;
  terms.replace(terms.find("\"post\""), 6, "\"peri\"");
  const ClaimEvaluation none = evaluate_claim(
      read_one_claim(tmp, terms + "expect = \"negative\"\ndrop_incomplete_pairs = true\n"),
      tmp / "study");
  EXPECT_TRUE(none.pairs.empty());
  EXPECT_EQ(none.dropped, (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(none.decision.verdict, Verdict::inconclusive) << none.decision.reason;
}

// A share (share = true): runs.csv's 0/1 column per seed, its share and exact binomial
// interval; a value other than 0 or 1 is an error naming the claim.
TEST(Evaluate, ShareOfSeedsHasTheExactBinomialInterval) {
  TempDir tmp;
  write_study(tmp, "");
  write_bytes(tmp / "study" / "runs.csv",
              "experiment,variant,scheme,seed,status,diverged\n"
              "e,post,post,1,finished,0\ne,post,post,2,finished,0\ne,post,post,3,finished,0\n"
              "e,post,post,4,finished,0\ne,post,post,5,finished,0\n");
  const std::string body =
      "source = \"runs.csv\"\n"
      "terms = [{ filter = { variant = \"post\" }, value = \"diverged\" }]\n"
      "expect = \"measure\"\n";
  const ClaimEvaluation share =
      evaluate_claim(read_one_claim(tmp, body + "share = true\n"), tmp / "study");
  EXPECT_EQ(share.decision.verdict, Verdict::measured);
  EXPECT_EQ(share.statistic.n, 5);
  EXPECT_EQ(share.statistic.effect, 0.0);
  EXPECT_EQ(share.statistic.low, 0.0);
  EXPECT_NEAR(share.statistic.high, 1.0 - std::pow(0.025, 1.0 / 5), 1e-12);  // 0.522
  // Without the mark, the Student-t interval of five zeros is [0, 0].
  const ClaimEvaluation mean = evaluate_claim(read_one_claim(tmp, body), tmp / "study");
  EXPECT_EQ(mean.statistic.high, 0.0);

  write_bytes(tmp / "study" / "runs.csv",
              "experiment,variant,scheme,seed,status,diverged\n"
              "e,post,post,1,finished,0\ne,post,post,2,finished,0.5\n");
  try {
    evaluate_claim(read_one_claim(tmp, body + "share = true\n"), tmp / "study");
    FAIL() << "a share of values other than 0 and 1 must not be decided";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("claim 'c' (share = true): a share needs values 0 or 1, not 0.5"),
              std::string::npos)
        << m;
  }
}

// "second_half": the steps after half of train.steps = 10, so 6..10 and not 5; cv of the
// training loss there, per seed.
TEST(Evaluate, SecondHalfOfTraining) {
  TempDir tmp;
  write_bytes(tmp / "study" / "curves.csv",
              "variant,seed,step,train_loss\npre,1,0,100\npre,1,5,100\npre,1,6,1\npre,1,10,3\n"
              "pre,2,5,100\npre,2,8,2\npre,2,10,2\n");
  write_bytes(tmp / "study" / "experiment.json", R"({"train": {"max_len": 4, "steps": 10}})");
  const Claim c = read_one_claim(tmp, R"(source = "curves.csv"
terms = [{ filter = { variant = "pre", step = "second_half" }, value = "train_loss", reduce = "cv" }]
expect = "measure"
)");
  const ClaimEvaluation e = evaluate_claim(c, tmp / "study");
  ASSERT_EQ(e.pairs.size(), 2u);
  EXPECT_DOUBLE_EQ(e.pairs[0].value, 0.5);  // 1 and 3: σ 1 (divisor n), μ 2
  EXPECT_DOUBLE_EQ(e.pairs[1].value, 0.0);  // 2 and 2
}

// Lengths 2, 4 (trained: max_len 4) and 6, 8 (beyond); the value is the length, so the mean
// beyond training is 7 and within it 3. The filter compares numbers numerically ("8.0" = 8).
TEST(Evaluate, BeyondAndWithinTraining) {
  TempDir tmp;
  write_study(tmp,
              "pre,1,2,tvd,2\npre,1,4,tvd,4\npre,1,6,tvd,6\npre,1,8.0,tvd,8\n"
              "pre,2,2,tvd,2\npre,2,4,tvd,4\npre,2,6,tvd,6\npre,2,8,tvd,8\n");
  for (const auto& [which, expected] :
       {std::pair<std::string, double>{"beyond_training", 7.0}, {"within_training", 3.0}}) {
    const Claim c =
        read_one_claim(tmp, "terms = [{ filter = { variant = [\"pre\", \"x\"], length = \"" +
                                which + "\" } }]\nexpect = \"positive\"\n");
    const ClaimEvaluation e = evaluate_claim(c, tmp / "study");
    ASSERT_EQ(e.pairs.size(), 2u) << which;
    EXPECT_DOUBLE_EQ(e.pairs[0].value, expected) << which;
    EXPECT_DOUBLE_EQ(e.pairs[1].value, expected) << which;
  }
  const Claim exact =
      read_one_claim(tmp, "terms = [{ filter = { length = 8 } }]\nexpect = \"positive\"\n");
  EXPECT_DOUBLE_EQ(evaluate_claim(exact, tmp / "study").pairs[0].value, 8.0);
}

// curves.csv of a WSD study: 100 steps, warmup 10, decay over 20% of 90 steps from step 82.
// The claim reads the gap at the decay's first step and at the last step.
TEST(Evaluate, LastStepAndDecayStart) {
  TempDir tmp;
  write_bytes(tmp / "study" / "curves.csv",
              "variant,seed,step,val_loss\npre,1,0,9\npre,1,82,3\npre,1,100,2\n"
              "pre,2,82,3.5\npre,2,100,2.25\n");
  write_bytes(tmp / "study" / "experiment.json",
              R"({"train": {"max_len": 4, "steps": 100, "warmup": 10, "schedule": "wsd",
                  "decay_fraction": 0.2}})");
  const Claim c = read_one_claim(tmp, R"(source = "curves.csv"
terms = [
  { weight = 1.0, filter = { variant = "pre", step = "last_step" }, value = "val_loss" },
  { weight = -1.0, filter = { variant = "pre", step = "decay_start" }, value = "val_loss" },
]
expect = "negative"
)");
  const ClaimEvaluation e = evaluate_claim(c, tmp / "study");
  ASSERT_EQ(e.pairs.size(), 2u);
  EXPECT_DOUBLE_EQ(e.pairs[0].value, -1.0);
  EXPECT_DOUBLE_EQ(e.pairs[1].value, -1.25);
  // Another schedule has no decay start: an error, never a silent match.
  write_bytes(tmp / "study" / "experiment.json",
              R"({"train": {"max_len": 4, "steps": 100, "warmup": 10, "schedule": "cosine"}})");
  try {
    evaluate_claim(c, tmp / "study");
    FAIL();
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("needs a study trained with schedule = \"wsd\""),
              std::string::npos)
        << err.what();
  }
}

TEST(Reduce, Kinds) {
  EXPECT_DOUBLE_EQ(reduce_values(Reduce::mean, {1, 2, 6}, {}), 3.0);
  // cv: population standard deviation over the mean; {1, 3}: std 1, mean 2.
  EXPECT_DOUBLE_EQ(reduce_values(Reduce::cv, {1, 3}, {}), 0.5);
  EXPECT_DOUBLE_EQ(reduce_values(Reduce::max_over_min, {2, 8, 4}, {}), 4.0);
  // value = 3 x^−0.5 exactly: slope −0.5.
  std::vector<double> x = {1, 4, 16, 64}, v;
  for (double xi : x) v.push_back(3.0 / std::sqrt(xi));
  EXPECT_NEAR(reduce_values(Reduce::loglog_slope, v, x), -0.5, 1e-12);
  EXPECT_THROW(reduce_values(Reduce::cv, {1}, {}), std::invalid_argument);
  EXPECT_THROW(reduce_values(Reduce::max_over_min, {0, 1}, {}), std::invalid_argument);
  EXPECT_THROW(reduce_values(Reduce::loglog_slope, {1, 2}, {3, 3}), std::invalid_argument);
  // best_mean: groups (x) 0 and 1 with means 2 and 5; the larger is not the largest row's.
  EXPECT_DOUBLE_EQ(reduce_values(Reduce::best_mean, {1, 3, 6, 4, 5}, {0, 0, 1, 1, 1}), 5.0);
  EXPECT_DOUBLE_EQ(reduce_values(Reduce::best_mean, {-2, -4}, {7, 3}), -2.0);
}

// A claim on the depth-style table: cv over layers per seed, and a log-log slope against a
// column named by x.
TEST(Evaluate, ReduceOverRowsOfAPairWithValueAndX) {
  TempDir tmp;
  write_bytes(tmp / "study" / "layers.csv",
              "variant,seed,layer,grad_norm\n"
              "a,1,0,1\na,1,1,3\nb,1,0,2\nb,1,1,2\n"
              "a,2,0,1\na,2,1,3\nb,2,0,1\nb,2,1,1\n");
  const Claim c =
      read_one_claim(tmp,
                     "source = \"layers.csv\"\n"
                     "terms = [{ filter = { variant = \"b\" }, reduce = \"cv\", value = "
                     "\"grad_norm\" },\n"
                     "  { weight = -1, filter = { variant = \"a\" }, reduce = \"cv\", "
                     "value = \"grad_norm\" }]\n"
                     "expect = \"negative\"\n");
  const ClaimEvaluation e = evaluate_claim(c, tmp / "study");
  ASSERT_EQ(e.pairs.size(), 2u);
  EXPECT_DOUBLE_EQ(e.pairs[0].value, -0.5);  // cv(b) = 0, cv(a) = 0.5
  EXPECT_DOUBLE_EQ(e.pairs[1].value, -0.5);

  const Claim slope =
      read_one_claim(tmp,
                     "source = \"layers.csv\"\n"
                     "terms = [{ filter = { variant = \"a\" }, reduce = "
                     "\"loglog_slope\", value = \"grad_norm\", x = \"grad_norm\" }]\n"
                     "expect = { band = [0.9, 1.1] }\n");
  EXPECT_DOUBLE_EQ(evaluate_claim(slope, tmp / "study").pairs[0].value, 1.0);

  // The best variant of each seed, each averaged over its layers: seed 1 b (2 against a's 2),
  // seed 2 a (2 against b's 1).
  const Claim best = read_one_claim(tmp,
                                    "source = \"layers.csv\"\n"
                                    "terms = [{ reduce = \"best_mean\", by = \"variant\", value = "
                                    "\"grad_norm\" }]\n"
                                    "expect = { band = [1.5, 2.5] }\n");
  const ClaimEvaluation b = evaluate_claim(best, tmp / "study");
  ASSERT_EQ(b.pairs.size(), 2u);
  EXPECT_DOUBLE_EQ(b.pairs[0].value, 2.0);
  EXPECT_DOUBLE_EQ(b.pairs[1].value, 2.0);
  const Claim best_layer =
      read_one_claim(tmp,
                     "source = \"layers.csv\"\n"
                     "terms = [{ reduce = \"best_mean\", by = \"layer\", value = "
                     "\"grad_norm\" }]\n"
                     "expect = { band = [1.5, 2.5] }\n");
  const ClaimEvaluation l = evaluate_claim(best_layer, tmp / "study");
  EXPECT_DOUBLE_EQ(l.pairs[0].value, 2.5);  // seed 1: layer 1 (3, 2) against layer 0 (1, 2)
  EXPECT_DOUBLE_EQ(l.pairs[1].value, 2.0);  // seed 2: layer 1 (3, 1) against layer 0 (1, 1)
}

std::string read_error(const std::string& text) {
  return testing::claims_file_error(text);
}

TEST(ClaimsFile, StrictWithLineAndKey) {
  const std::string head =
      "paper = \"1\"\n[[claim]]\nid = \"c\"\nsentence = \"s\"\nstudy = \"x\"\n";
  const std::string terms = "terms = [{ filter = { variant = \"pre\" } }]\n";
  EXPECT_EQ(read_error(head + terms + "expect = \"negative\"\n"), "");
  EXPECT_EQ(read_error(head + terms + "expect = \"negative\"\nexpct = 1\n"),
            ":8: unknown key 'expct' in [[claim]]; allowed: id, sentence, study, set, source, "
            "pair_by, terms, expect, min_pairs, deterministic, share, negative_control, "
            "drop_incomplete_pairs, choice, grid");
  EXPECT_EQ(read_error(head + terms + "expect = \"lower\"\n"),
            ":7: key 'expect' in claim 'c' is not valid; allowed: \"negative\", \"positive\", "
            "\"measure\" (a finding) or { band = [lo, hi] } with lo < hi, at most one of them "
            "infinite (-inf or inf)");
  EXPECT_EQ(read_error(head + terms + "expect = { band = [0.6, 0.4] }\n").substr(0, 3), ":7:");
  // Numbers a double cannot hold exactly, bands that decide nothing, weights that weigh
  // nothing, and counts beyond int are refused, not rounded or truncated.
  EXPECT_EQ(read_error(head + terms + "expect = { band = [-inf, inf] }\n").substr(0, 3), ":7:");
  EXPECT_EQ(read_error(head + terms + "expect = { band = [nan, 1] }\n").substr(0, 3), ":7:");
  EXPECT_EQ(read_error(head + terms + "expect = { band = [inf, inf] }\n").substr(0, 3), ":7:");
  EXPECT_EQ(read_error(head + terms + "expect = { band = [0.9, inf] }\n"), "");  // at least 0.9
  EXPECT_EQ(read_error(head + terms + "expect = { band = [0, 9007199254740993] }\n").substr(0, 3),
            ":7:");
  EXPECT_EQ(read_error(head + terms + "expect = { band = [0, 9007199254740992] }\n"), "");
  for (const char* weight : {"nan", "0", "inf", "-9007199254740993"}) {
    EXPECT_NE(read_error(head + "terms = [{ weight = " + weight +
                         ", filter = { variant = \"pre\" } }]\nexpect = \"negative\"\n")
                  .find("key 'weight' in claim 'c' terms must be a finite number other than 0"),
              std::string::npos)
        << weight;
  }
  EXPECT_NE(read_error(head + "terms = [{ filter = { seed = 9007199254740993 } }]\n"
                              "expect = \"negative\"\n")
                .find("filter 'seed'"),
            std::string::npos);
  EXPECT_NE(read_error(head + terms + "expect = \"negative\"\nmin_pairs = 4294967298\n")
                .find("must be an integer from 1 to 1000000"),
            std::string::npos);
  EXPECT_NE(read_error(head + "terms = [{ filter = { variant = \"pre\" }, reduce = \"median\" }]\n"
                              "expect = \"negative\"\n")
                .find("allowed: mean, cv, max_over_min, loglog_slope, best_mean"),
            std::string::npos);
  EXPECT_NE(read_error(head + "terms = [{ reduce = \"loglog_slope\" }]\nexpect = \"negative\"\n")
                .find("needs x = \"COLUMN\""),
            std::string::npos);
  EXPECT_NE(read_error(head + "terms = [{ reduce = \"best_mean\" }]\nexpect = \"negative\"\n")
                .find("needs by = \"COLUMN\""),
            std::string::npos);
  EXPECT_NE(read_error(head + "terms = [{ by = \"variant\" }]\nexpect = \"negative\"\n")
                .find("key 'by' in claim 'c' terms is for reduce = \"best_mean\" only"),
            std::string::npos);
  EXPECT_NE(
      read_error(head + terms + "expect = \"negative\"\ngrid = { row = \"a\", column = \"b\" }\n")
          .find("key 'grid' in claim 'c' is for findings (expect = \"measure\") only"),
      std::string::npos);
  EXPECT_EQ(
      read_error(head + terms + "expect = \"measure\"\ngrid = { row = \"a\", column = \"b\" }\n"),
      "");
  EXPECT_NE(
      read_error(head + terms + "expect = \"measure\"\ngrid = { row = \"a\" }\n").find("column"),
      std::string::npos);
  EXPECT_NE(read_error(head + terms).find("has no 'expect' (required)"), std::string::npos);
  EXPECT_NE(read_error(head + terms + "expect = \"negative\"\nmin_pairs = 1\n")
                .find("min_pairs' in claim 'c' must be at least 2"),
            std::string::npos);
  EXPECT_EQ(read_error(head + terms + "expect = \"negative\"\ndeterministic = true\n"), "");
  EXPECT_NE(read_error(head + terms + "expect = \"negative\"\ndeterministic = 1\n")
                .find("must be true or false"),
            std::string::npos);
  EXPECT_EQ(read_error(head + terms + "expect = \"measure\"\nshare = true\n"), "");
  EXPECT_NE(read_error(head + terms + "expect = \"measure\"\nshare = \"yes\"\n")
                .find("key 'share' in claim 'c' must be true or false"),
            std::string::npos);
  EXPECT_NE(read_error(head + terms + "expect = \"measure\"\ndeterministic = true\nshare = true\n")
                .find("claim 'c' cannot be both a share and deterministic"),
            std::string::npos);
  EXPECT_EQ(read_error(head + terms + "expect = \"negative\"\nnegative_control = true\n"), "");
  EXPECT_NE(read_error(head + terms + "expect = \"negative\"\nnegative_control = \"yes\"\n")
                .find("key 'negative_control' in claim 'c' must be true or false"),
            std::string::npos);
}

// A deterministic claim (no sampling randomness): one pair decides, and the interval is the
// range of the values, not a Student-t interval.
TEST(Evaluate, DeterministicClaimIsDecidedByItsValues) {
  TempDir tmp;
  write_study(tmp, "pre,1,8,tvd,3.0\n");
  const std::string terms = "terms = [{ filter = { variant = \"pre\", metric = \"tvd\" } }]\n";
  const ClaimEvaluation one = evaluate_claim(
      read_one_claim(tmp, terms + "expect = { band = [2.9, 3.1] }\ndeterministic = true\n"),
      tmp / "study");
  EXPECT_EQ(one.statistic.n, 1);
  EXPECT_DOUBLE_EQ(one.statistic.low, 3.0);
  EXPECT_DOUBLE_EQ(one.statistic.high, 3.0);
  EXPECT_EQ(one.decision.verdict, Verdict::reproduced);
  // Without the mark, one pair is too few.
  EXPECT_EQ(
      evaluate_claim(read_one_claim(tmp, terms + "expect = { band = [2.9, 3.1] }\n"), tmp / "study")
          .decision.verdict,
      Verdict::inconclusive);
  // Two pairs that differ: the interval is their range, and it can leave the band.
  write_study(tmp, "pre,1,8,tvd,3.0\npre,2,8,tvd,3.2\n");
  const ClaimEvaluation two = evaluate_claim(
      read_one_claim(tmp, terms + "expect = { band = [2.9, 3.1] }\ndeterministic = true\n"),
      tmp / "study");
  EXPECT_DOUBLE_EQ(two.statistic.low, 3.0);
  EXPECT_DOUBLE_EQ(two.statistic.high, 3.2);
  EXPECT_EQ(two.decision.verdict, Verdict::inconclusive);
}

}  // namespace
}  // namespace normlab::claims
