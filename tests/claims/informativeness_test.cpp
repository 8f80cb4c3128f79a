// Design rule D1 (claims/informativeness.hpp) on synthetic result tables whose places are known:
// the floor and ceiling table, which lengths are informative, the two untestable verdicts and
// the tie, the chance rows of TVD (read, or recomputed from experiment.json), and the claims D1
// does not govern.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/claims/claims_file.hpp"
#include "normlab/claims/evaluate.hpp"
#include "normlab/claims/informativeness.hpp"
#include "normlab/eval/evaluator.hpp"
#include "normlab/tasks/task.hpp"
#include "support/claim_file.hpp"
#include "support/cli.hpp"

namespace normlab::claims {
namespace {

using normlab::testing::read_one_claim;
using normlab::testing::TempDir;
using normlab::testing::write_bytes;

// experiment.json: trained up to length 8; `task` as the study records it.
void write_experiment(const TempDir& tmp, const std::string& task) {
  write_bytes(tmp / "study" / "experiment.json",
              R"({"train": {"max_len": 8}, "task": )" + task +
                  R"(, "eval": {"lengths": [4, 12, 16, 20], "samples": 50, "seed": 7}})");
}

// post − pre of `metric` beyond training (lengths 12, 16, 20; 4 is within training).
std::string claim_on(const std::string& metric, const std::string& expect) {
  return fmt::format(R"(terms = [
  {{ weight = 1.0,  filter = {{ variant = "post", metric = "{0}", length = "beyond_training" }} }},
  {{ weight = -1.0, filter = {{ variant = "pre",  metric = "{0}", length = "beyond_training" }} }},
]
expect = "{1}"
)",
                     metric, expect);
}

// Rows of three seeds: pre's value at each length is pre_at[length] (+0.001 · (seed − 2), so the
// mean over seeds is exactly pre_at), post's is pre's + post_gain.
std::string rows(const std::string& metric, const std::map<int, double>& pre_at, double post_gain) {
  std::string out = "variant,seed,length,metric,value\n";
  for (int seed = 1; seed <= 3; ++seed) {
    for (const auto& [n, m] : pre_at) {
      const double pre = m + 0.001 * (seed - 2);
      out += fmt::format("pre,{},{},{},{}\npost,{},{},{},{}\n", seed, n, metric, pre, seed, n,
                         metric, pre + post_gain);
    }
  }
  return out;
}

// max_retrieval as the kept full tier recorded it (v = 32 values), accuracy: f = 1/32, c = 1,
// ε = 0.05 · 31/32 = 0.0484375, so a length is informative for 0.0796875 < m < 0.9515625.
const char* kMaxRetrieval = R"({"name": "max_retrieval", "v": 32})";

ClaimEvaluation evaluate_accuracy(const TempDir& tmp, const std::map<int, double>& pre_at,
                                  double gain) {
  write_experiment(tmp, kMaxRetrieval);
  write_bytes(tmp / "study" / "results.csv", rows("accuracy", pre_at, gain));
  return evaluate_claim(read_one_claim(tmp, claim_on("accuracy", "positive")), tmp / "study");
}

TEST(MetricScale, FloorAndCeilingOfEveryTaskMetric) {
  const auto scale = [](const std::string& task, const std::string& metric, int64_t n) {
    return metric_scale(nlohmann::json::parse(task), metric, n);
  };
  const auto sc_tvd = scale(R"({"name": "set_complement", "v": 32})", "tvd", 12);
  ASSERT_TRUE(sc_tvd);
  EXPECT_EQ(sc_tvd->chance_row, "tvd_chance");
  EXPECT_EQ(sc_tvd->ceiling, 0.0);
  const auto sc_acc = scale(R"({"name": "set_complement", "v": 32})", "accuracy", 12);
  EXPECT_DOUBLE_EQ(sc_acc->floor, 20.0 / 32.0);  // a guess among 32 elements, 20 absent
  EXPECT_EQ(sc_acc->ceiling, 1.0);
  EXPECT_DOUBLE_EQ(scale(kMaxRetrieval, "accuracy", 64)->floor, 1.0 / 32.0);
  EXPECT_DOUBLE_EQ(scale(R"({"name": "max_retrieval", "levels": 256, "base": 16, "classes": 10})",
                         "accuracy", 64)
                       ->floor,
                   0.1);
  EXPECT_DOUBLE_EQ(
      scale(R"({"name": "argmax_retrieval", "scores": 16, "values": 16})", "accuracy", 64)->floor,
      1.0 / 16.0);
  EXPECT_DOUBLE_EQ(
      scale(R"({"name": "dict_lookup", "keys": 16384, "values": 16})", "accuracy", 64)->floor,
      1.0 / 16.0);
  EXPECT_EQ(scale(R"({"name": "tomita", "n": 3})", "roc_auc", 64)->floor, 0.5);
  EXPECT_EQ(scale(R"({"name": "tomita", "n": 3})", "accuracy", 64)->floor, 0.5);
  EXPECT_EQ(scale(R"({"name": "dyck", "k": 2, "m": 4})", "tvd", 64)->chance_row, "tvd_chance");
  const auto loss = scale(R"({"name": "char_lm"})", "loss", 64);
  EXPECT_DOUBLE_EQ(loss->floor, std::log(114.0));
  EXPECT_EQ(loss->ceiling, 0.0);
  // The Chomsky-hierarchy tasks: the best answer that does not read the input, on the study's
  // own sequences (below).
  EXPECT_TRUE(scale(R"({"name": "bucket_sort"})", "accuracy", 64)->blind_answer);
  EXPECT_EQ(scale(R"({"name": "bucket_sort"})", "accuracy", 64)->ceiling, 1.0);
  EXPECT_FALSE(sc_acc->blind_answer);
  EXPECT_FALSE(scale(R"({"name": "parity_check"})", "tvd", 64));
  EXPECT_FALSE(scale(R"({"name": "dyck", "k": 2, "m": 4})", "all_legal", 64));
  EXPECT_FALSE(scale(kMaxRetrieval, "tvd", 64));
}

// pre at 0.99 everywhere beyond training (≥ 1 − ε): untestable (ceiling), although post's gain
// alone would reproduce the claim. The length within training is not checked.
// A finding is checked by D1 like a claim: a baseline at the ceiling makes it untestable, not
// measured.
TEST(Informativeness, FindingWithItsBaselineAtTheCeilingIsUntestable) {
  TempDir tmp;
  write_experiment(tmp, kMaxRetrieval);
  write_bytes(tmp / "study" / "results.csv",
              rows("accuracy", {{4, 0.5}, {12, 0.99}, {16, 0.99}, {20, 0.99}}, 0.005));
  const ClaimEvaluation e =
      evaluate_claim(read_one_claim(tmp, claim_on("accuracy", "measure")), tmp / "study");
  ASSERT_TRUE(e.informativeness.applies);
  EXPECT_EQ(e.decision.verdict, Verdict::untestable_ceiling) << e.decision.reason;
}

TEST(Informativeness, BaselineAtTheCeilingIsUntestableCeiling) {
  TempDir tmp;
  const ClaimEvaluation e =
      evaluate_accuracy(tmp, {{4, 0.5}, {12, 0.99}, {16, 0.99}, {20, 0.99}}, 0.005);
  ASSERT_TRUE(e.informativeness.applies);
  EXPECT_EQ(e.decision.verdict, Verdict::untestable_ceiling) << e.decision.reason;
  EXPECT_EQ(to_string(e.decision.verdict), "untestable (ceiling)");
  ASSERT_EQ(e.informativeness.lengths.size(), 3u);
  EXPECT_EQ(e.informativeness.lengths[0].length, 12);
  EXPECT_NEAR(e.informativeness.lengths[0].baseline, 0.99, 1e-12);
  EXPECT_DOUBLE_EQ(e.informativeness.lengths[0].floor, 1.0 / 32.0);
  EXPECT_EQ(e.informativeness.lengths[0].ceiling, 1.0);
  EXPECT_NEAR(e.informativeness.lengths[0].margin, 0.0484375, 1e-15);
  EXPECT_EQ(e.informativeness.informative(), 0);
  EXPECT_NE(e.decision.reason.find("0 of 3 length(s) beyond training informative"),
            std::string::npos)
      << e.decision.reason;
  EXPECT_NE(e.decision.reason.find("ceiling at n = 12, 16, 20"), std::string::npos)
      << e.decision.reason;
  // The pairs and the interval are still computed and reported.
  EXPECT_EQ(e.statistic.n, 3);
  EXPECT_NEAR(e.statistic.effect, 0.005, 1e-12);
}

// Two informative lengths (0.5, 0.3) and one at the floor (0.04 ≤ f + ε): decided as before.
TEST(Informativeness, TwoInformativeLengthsAreDecidedByTheInterval) {
  TempDir tmp;
  const ClaimEvaluation e = evaluate_accuracy(tmp, {{12, 0.5}, {16, 0.3}, {20, 0.04}}, 0.1);
  EXPECT_EQ(e.informativeness.informative(), 2);
  EXPECT_EQ(e.informativeness.lengths[2].place, Place::floor);
  EXPECT_FALSE(e.informativeness.untestable());
  EXPECT_EQ(e.decision.verdict, Verdict::reproduced) << e.decision.reason;
}

// One informative length, one at the ceiling, one at the floor: untestable, and the tie goes to
// the floor. One more at the ceiling tips it.
TEST(Informativeness, OneInformativeLengthIsUntestableAndTiesGoToTheFloor) {
  TempDir tmp;
  ClaimEvaluation e = evaluate_accuracy(tmp, {{12, 0.995}, {16, 0.5}, {20, 0.03}}, 0.001);
  EXPECT_EQ(e.informativeness.informative(), 1);
  EXPECT_EQ(e.decision.verdict, Verdict::untestable_floor) << e.decision.reason;
  EXPECT_EQ(to_string(e.decision.verdict), "untestable (floor)");
  e = evaluate_accuracy(tmp, {{12, 0.995}, {16, 0.5}, {20, 0.03}, {24, 0.99}}, 0.001);
  EXPECT_EQ(e.decision.verdict, Verdict::untestable_ceiling) << e.decision.reason;
}

// ε = 0.05 · |c − f|: a length is informative only when f + ε = 0.0796875 < m < c − ε =
// 0.9515625; 0.9515 and 0.0797 are just inside, 0.9516 and 0.0796 just outside.
TEST(Informativeness, TheMarginIsTwoPercentOfTheSpan) {
  TempDir tmp;
  const ClaimEvaluation e =
      evaluate_accuracy(tmp, {{12, 0.9515}, {16, 0.9516}, {20, 0.0797}, {24, 0.0796}}, 0.001);
  ASSERT_EQ(e.informativeness.lengths.size(), 4u);
  EXPECT_EQ(e.informativeness.lengths[0].place, Place::informative);
  EXPECT_EQ(e.informativeness.lengths[1].place, Place::ceiling);
  EXPECT_EQ(e.informativeness.lengths[2].place, Place::informative);
  EXPECT_EQ(e.informativeness.lengths[3].place, Place::floor);
}

// TVD is lower-is-better: the ceiling is 0 and the floor the tvd_chance rows at each length.
// f = 0.4, 0.5, 0.6 at 12, 16, 20 (ε = 0.02, 0.025, 0.03): pre at 0.395 (floor: ≥ f − ε), 0.3
// (informative), 0.005 (ceiling: ≤ ε) is one informative length, a tie, so the floor.
TEST(Informativeness, TvdReadsItsChanceRowsAndIsMirrored) {
  TempDir tmp;
  write_experiment(tmp, R"({"name": "set_complement", "v": 32})");
  std::string table = rows("tvd", {{12, 0.395}, {16, 0.3}, {20, 0.005}}, -0.1);
  for (const char* variant : {"pre", "post"}) {
    for (int seed = 1; seed <= 3; ++seed) {
      table += fmt::format(
          "{0},{1},12,tvd_chance,0.4\n{0},{1},16,tvd_chance,0.5\n"
          "{0},{1},20,tvd_chance,0.6\n",
          variant, seed);
    }
  }
  write_bytes(tmp / "study" / "results.csv", table);
  const ClaimEvaluation e =
      evaluate_claim(read_one_claim(tmp, claim_on("tvd", "negative")), tmp / "study");
  ASSERT_EQ(e.informativeness.lengths.size(), 3u);
  EXPECT_DOUBLE_EQ(e.informativeness.lengths[0].floor, 0.4);  // the mean of six rows of 0.4
  EXPECT_EQ(e.informativeness.lengths[0].ceiling, 0.0);
  EXPECT_EQ(e.informativeness.lengths[0].place, Place::floor);
  EXPECT_EQ(e.informativeness.lengths[1].place, Place::informative);
  EXPECT_EQ(e.informativeness.lengths[2].place, Place::ceiling);
  EXPECT_EQ(e.decision.verdict, Verdict::untestable_floor) << e.decision.reason;
  EXPECT_NE(e.informativeness.floor_rule.find("tvd_chance rows"), std::string::npos);
}

// A table without tvd_chance rows (written before the evaluator recorded them): the floor is
// recomputed from experiment.json's task and eval settings. For set_complement(v = 32) the
// uniform predictor's TVD is (s + 1)/33 on every sample.
TEST(Informativeness, MissingChanceRowsAreRecomputedFromTheStudysSettings) {
  TempDir tmp;
  write_experiment(tmp, R"({"name": "set_complement", "v": 32})");
  write_bytes(tmp / "study" / "results.csv", rows("tvd", {{12, 0.2}, {16, 0.3}, {20, 0.4}}, -0.1));
  const ClaimEvaluation e =
      evaluate_claim(read_one_claim(tmp, claim_on("tvd", "negative")), tmp / "study");
  ASSERT_EQ(e.informativeness.lengths.size(), 3u);
  for (const LengthCheck& l : e.informativeness.lengths) {
    EXPECT_NEAR(l.floor, (l.length + 1.0) / 33.0, 1e-14) << l.length;
    EXPECT_EQ(l.place, Place::informative) << l.length;
  }
  EXPECT_NE(e.informativeness.floor_rule.find("recomputed from experiment.json"),
            std::string::npos);
  EXPECT_EQ(e.decision.verdict, Verdict::reproduced) << e.decision.reason;
}

// parity_check, one output of two classes. The floor at each length is the share of the more
// frequent answer among the study's own 50 evaluation sequences there (counted here from the
// samples evaluate() draws: 28/50, 27/50 and 27/50 at 12, 16, 20), not ½: every seed is scored
// on those sequences, so a model that answers one class whatever the input scores that share
// at best, and a baseline at it is at the floor.
TEST(Informativeness, ChomskyFloorIsTheBestBlindAnswerOnTheStudysSequences) {
  TempDir tmp;
  write_experiment(tmp, R"({"name": "parity_check"})");
  const auto task = make_task_from_json({{"name", "parity_check"}});
  EvalConfig config;
  config.samples = 50;
  config.seed = 7;
  std::map<int64_t, double> share;
  for (const int64_t n : {12, 16, 20}) {
    int64_t ones = 0, all = 0;
    for_each_eval_batch(*task, config, n,
                        [&](const Batch& batch, int64_t, const std::vector<int64_t>& rows) {
                          for (const int64_t r : rows) {
                            ones += batch.target(r).most_likely() == task->vocab() - 1;
                            ++all;
                          }
                        });
    ASSERT_EQ(all, 50);
    share[n] = static_cast<double>(std::max(ones, all - ones)) / static_cast<double>(all);
  }
  write_bytes(
      tmp / "study" / "results.csv",
      rows("accuracy", {{12, share[12]}, {16, share[16] + 0.25}, {20, share[20] + 0.25}}, 0.02));
  const ClaimEvaluation e =
      evaluate_claim(read_one_claim(tmp, claim_on("accuracy", "positive")), tmp / "study");
  ASSERT_EQ(e.informativeness.lengths.size(), 3u);
  for (const LengthCheck& l : e.informativeness.lengths) {
    EXPECT_DOUBLE_EQ(l.floor, share[l.length]) << l.length;
    EXPECT_GT(l.floor, 0.5) << l.length;
  }
  EXPECT_EQ(e.informativeness.lengths[0].place, Place::floor);
  EXPECT_EQ(e.informativeness.lengths[1].place, Place::informative);
  EXPECT_EQ(e.informativeness.lengths[2].place, Place::informative);
  EXPECT_NE(e.informativeness.floor_rule.find("own evaluation sequences"), std::string::npos);
  EXPECT_EQ(e.decision.verdict, Verdict::reproduced) << e.decision.reason;
}

TEST(Informativeness, ClaimsItDoesNotGovern) {
  TempDir tmp;
  write_experiment(tmp, kMaxRetrieval);
  write_bytes(tmp / "study" / "results.csv", rows("accuracy", {{4, 0.99}, {12, 0.99}}, 0.005));
  // Lengths named, not "beyond_training".
  const Claim fixed = read_one_claim(tmp, R"(terms = [
  { weight = 1.0,  filter = { variant = "post", metric = "accuracy", length = 12 } },
  { weight = -1.0, filter = { variant = "pre",  metric = "accuracy", length = 12 } },
]
expect = "positive"
)");
  EXPECT_FALSE(informativeness_applies(fixed));
  EXPECT_FALSE(evaluate_claim(fixed, tmp / "study").informativeness.applies);
  // One arm: no baseline to check.
  const Claim one_arm =
      read_one_claim(tmp,
                     "terms = [{ filter = { variant = \"pre\", metric = \"accuracy\", length = "
                     "\"beyond_training\" } }]\nexpect = \"positive\"\n");
  EXPECT_FALSE(informativeness_applies(one_arm));
  // Another source.
  Claim other = read_one_claim(tmp, claim_on("accuracy", "positive"));
  EXPECT_TRUE(informativeness_applies(other));
  other.source = "dilution_fit.csv";
  EXPECT_FALSE(informativeness_applies(other));
}

TEST(Informativeness, ErrorsNameTheClaimAndTheRule) {
  TempDir tmp;
  write_experiment(tmp, R"({"name": "dyck", "k": 2, "m": 4})");
  write_bytes(tmp / "study" / "results.csv", rows("all_legal", {{12, 0.5}, {16, 0.4}}, 0.1));
  try {
    evaluate_claim(read_one_claim(tmp, claim_on("all_legal", "positive")), tmp / "study");
    FAIL() << "no floor and ceiling for dyck's all_legal";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("claim 'c': design rule D1: docs/tasks.md defines no "
                                         "floor and ceiling for dyck's all_legal"),
              std::string::npos)
        << e.what();
  }
  const Claim no_metric = read_one_claim(tmp, R"(terms = [
  { weight = 1.0,  filter = { variant = "post", length = "beyond_training" } },
  { weight = -1.0, filter = { variant = "pre",  length = "beyond_training" } },
]
expect = "positive"
)");
  try {
    evaluate_claim(no_metric, tmp / "study");
    FAIL() << "the baseline selects no metric";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("selects no single metric"), std::string::npos)
        << e.what();
  }
}

// A length cell that is not an exact integer (1e300 would overflow the conversion to an integer,
// undefined behaviour that fuzz_claims found) is refused in one message naming the claim.
TEST(Informativeness, ALengthThatIsNoIntegerIsRefused) {
  EXPECT_EQ(cell_integer("64"), 64);
  EXPECT_EQ(cell_integer("64.0"), 64);
  EXPECT_EQ(cell_integer("-9007199254740992"), -9007199254740992);
  for (const char* bad : {"1e300", "6.5", "nan", "inf", "9007199254740994", "", "x"}) {
    EXPECT_FALSE(cell_integer(bad).has_value()) << bad;
  }
  TempDir tmp;
  write_experiment(tmp, kMaxRetrieval);
  write_bytes(tmp / "study" / "results.csv",
              "variant,seed,length,metric,value\npre,1,1e300,accuracy,0.5\n"
              "post,1,1e300,accuracy,0.6\npre,2,12,accuracy,0.5\npost,2,12,accuracy,0.6\n");
  try {
    evaluate_claim(read_one_claim(tmp, claim_on("accuracy", "positive")), tmp / "study");
    FAIL() << "a length of 1e300 was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a baseline row has length '1e300'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace normlab::claims
