// Open questions (docs/claims.md, "Open questions"): their strict reading from a claims file, and
// their answers in plain words from synthetic finding outcomes whose intervals are known.
#include "normlab/claims/questions.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "normlab/base/errors.hpp"
#include "support/claim_file.hpp"
#include "support/cli.hpp"

namespace normlab::claims {
namespace {

using normlab::testing::TempDir;
using normlab::testing::write_bytes;

// A paper with two findings, a difference (d) and a level (l), and a claim (c); `questions` is
// appended.
std::string paper_text(const std::string& questions) {
  return R"(paper = "1"
[[claim]]
id = "d"
sentence = "post minus pre"
study = "x"
terms = [{ weight = 1.0, filter = { variant = "post" } }, { weight = -1.0, filter = { variant = "pre" } }]
expect = "measure"
[[claim]]
id = "l"
sentence = "a level"
study = "x"
terms = [{ filter = { variant = "pre" } }]
expect = "measure"
[[claim]]
id = "c"
sentence = "a claim"
study = "x"
terms = [{ filter = { variant = "pre" } }]
expect = "negative"
)" + questions;
}

const std::string kQuestion = R"([[question]]
asks = "Does it hold deeper?"
source = "open question 1"
[[question.part]]
subject = "Post-norm's TVD against pre-norm's"
findings = [{ place = "at L = 2", id = "d" }, { place = "at L = 4", id = "l" }]
)";

std::string read_error(const std::string& text) {
  return testing::claims_file_error(text);
}

TEST(Questions, ReadFromTheClaimsFile) {
  TempDir tmp;
  write_bytes(tmp / "claims" / "p.toml", paper_text(kQuestion));
  const Paper p = read_paper(tmp / "claims" / "p.toml", tmp.path());
  ASSERT_EQ(p.questions.size(), 1u);
  const Question& q = p.questions[0];
  EXPECT_EQ(q.paper, "1");
  EXPECT_EQ(q.asks, "Does it hold deeper?");
  EXPECT_EQ(q.source, "open question 1");
  ASSERT_EQ(q.parts.size(), 1u);
  EXPECT_EQ(q.parts[0].subject, "Post-norm's TVD against pre-norm's");
  EXPECT_EQ(q.parts[0].findings, (std::vector<std::string>{"d", "l"}));
  EXPECT_EQ(q.parts[0].places, (std::vector<std::string>{"at L = 2", "at L = 4"}));
}

TEST(Questions, StrictReading) {
  EXPECT_EQ(read_error(paper_text(kQuestion)), "");
  EXPECT_NE(read_error(paper_text(kQuestion + "asked = 1\n")).find("unknown key 'asked'"),
            std::string::npos);
  std::string other = kQuestion;
  other.replace(other.find("id = \"l\""), 8, "id = \"zz\"");
  EXPECT_NE(read_error(paper_text(other)).find("'zz' in a question is not an id of this file"),
            std::string::npos)
      << read_error(paper_text(other));
  std::string claim = kQuestion;
  claim.replace(claim.find("id = \"l\""), 8, "id = \"c\"");
  EXPECT_NE(read_error(paper_text(claim)).find("'c' in a question is not a finding of this file"),
            std::string::npos)
      << read_error(paper_text(claim));
  EXPECT_NE(read_error(paper_text("[[question]]\nasks = \"a\"\nsource = \"b\"\n"))
                .find("has no 'part' (required)"),
            std::string::npos);
  EXPECT_NE(read_error(paper_text("[[question]]\nasks = \"a\"\nsource = \"b\"\n[[question.part]]\n"
                                  "subject = \"s\"\nfindings = []\n"))
                .find("key 'findings' in a question's part must be a non-empty list"),
            std::string::npos);
}

Claim finding(const std::string& id, std::vector<double> weights) {
  Claim c;
  c.id = id;
  c.expect.kind = Expectation::Kind::measure;
  for (double w : weights) {
    Term t;
    t.weight = w;
    c.terms.push_back(t);
  }
  return c;
}

ClaimOutcome measured(const Claim& c, double effect, double low, double high) {
  ClaimOutcome o;
  o.claim = c;
  o.verdict = "measured";
  o.evaluation.statistic.effect = effect;
  o.evaluation.statistic.low = low;
  o.evaluation.statistic.high = high;
  o.evaluation.statistic.n = 5;
  return o;
}

TEST(Questions, ADifferenceIsTermsWhoseWeightsSumToZero) {
  EXPECT_TRUE(is_difference(finding("a", {1.0, -1.0})));
  EXPECT_TRUE(is_difference(finding("a", {0.5, -0.25, -0.25})));
  EXPECT_TRUE(is_difference(finding("a", {0.1, 0.2, -0.3})));  // 0.1 + 0.2 − 0.3 ≠ 0 in doubles
  EXPECT_FALSE(is_difference(finding("a", {1.0})));
  EXPECT_FALSE(is_difference(finding("a", {1.0, -0.5})));
  EXPECT_FALSE(is_difference(finding("a", {0.5, 0.5})));
}

Question depth_question(std::vector<std::string> ids) {
  Question q;
  q.paper = "1";
  q.asks = "Does it hold deeper?";
  q.source = "open question 1";
  QuestionPart p;
  p.subject = "Post-norm's TVD against pre-norm's";
  for (size_t i = 0; i < ids.size(); ++i) {
    p.places.push_back("at L = " + std::to_string(2 << i));
    p.findings.push_back(ids[i]);
  }
  q.parts.push_back(p);
  return q;
}

TEST(Questions, ADifferenceReadsLowerHigherOrUnresolvedByItsInterval) {
  const Claim diff2 = finding("d2", {1, -1}), diff4 = finding("d4", {1, -1}),
              diff8 = finding("d8", {1, -1});
  const ClaimOutcome below = measured(diff2, -0.12, -0.16, -0.09);
  const ClaimOutcome above = measured(diff4, 0.05, 0.01, 0.09);
  const ClaimOutcome across = measured(diff8, 0.01, -0.02, 0.04);
  EXPECT_EQ(question_answer(depth_question({"d2", "d4", "d8"}), {&below, &above, &across}),
            "Post-norm's TVD against pre-norm's: lower at L = 2 (-0.12 [-0.16, -0.09]); higher at "
            "L = 4 (0.05 [0.01, 0.09]); no difference resolved at L = 8 (0.01 [-0.02, 0.04]).");
  // A NaN interval is not on either side.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const ClaimOutcome not_finite = measured(diff2, nan, nan, nan);
  EXPECT_EQ(question_answer(depth_question({"d2"}), {&not_finite}),
            "Post-norm's TVD against pre-norm's: no difference resolved at L = 2 (– [–, –]).");
}

TEST(Questions, ALevelReadsAsItsFigureAndTheUnmeasuredAsTheirVerdict) {
  const Claim level = finding("l", {1}), diff = finding("d", {1, -1});
  const ClaimOutcome l = measured(level, 0.98, 0.97, 0.99);
  ClaimOutcome untestable;
  untestable.claim = diff;
  untestable.verdict = "untestable (floor)";
  EXPECT_EQ(question_answer(depth_question({"l", "d", "missing"}), {&l, &untestable}),
            "Post-norm's TVD against pre-norm's: 0.98 [0.97, 0.99] at L = 2; untestable (floor) "
            "at L = 4; not selected at L = 8.");
}

TEST(Questions, APartWithNothingMeasuredForOneReasonSaysItOnce) {
  ClaimOutcome a, b;
  a.claim = finding("a", {1, -1});
  b.claim = finding("b", {1, -1});
  a.verdict = b.verdict = "not run";
  Question q = depth_question({"a", "b"});
  EXPECT_EQ(question_answer(q, {&a, &b}), "Post-norm's TVD against pre-norm's: not run.");
  b.verdict = "inconclusive";
  EXPECT_EQ(question_answer(q, {&a, &b}),
            "Post-norm's TVD against pre-norm's: not run at L = 2; inconclusive at L = 4.");
  // Two parts: one sentence each.
  QuestionPart second = q.parts[0];
  second.subject = "Its gradient spread";
  q.parts.push_back(second);
  EXPECT_EQ(question_answer(q, {&a, &b}),
            "Post-norm's TVD against pre-norm's: not run at L = 2; inconclusive at L = 4. Its "
            "gradient spread: not run at L = 2; inconclusive at L = 4.");
}

// Consecutive findings that read the same (a level with the same figure, the same verdict) are
// one phrase with their places; a difference's figure is its own, so its items stay apart.
TEST(Questions, FindingsThatReadTheSameShareOnePhrase) {
  const Claim l2 = finding("l2", {1}), l4 = finding("l4", {1}), l8 = finding("l8", {1}),
              l16 = finding("l16", {1});
  const ClaimOutcome a = measured(l2, 0, 0, 0), b = measured(l4, 0, 0, 0),
                     c = measured(l8, 0, 0, 0), d = measured(l16, 0.4, -0.3, 1.1);
  EXPECT_EQ(question_answer(depth_question({"l2", "l4", "l8", "l16"}), {&a, &b, &c, &d}),
            "Post-norm's TVD against pre-norm's: 0 [0, 0] at L = 2, at L = 4 and at L = 8; 0.4 "
            "[-0.3, 1.1] at L = 16.");
  const Claim d2 = finding("d2", {1, -1}), d4 = finding("d4", {1, -1});
  const ClaimOutcome e = measured(d2, -0.2, -0.3, -0.1), f = measured(d4, -0.25, -0.3, -0.2);
  EXPECT_EQ(question_answer(depth_question({"d2", "d4"}), {&e, &f}),
            "Post-norm's TVD against pre-norm's: lower at L = 2 (-0.2 [-0.3, -0.1]); lower at L = "
            "4 (-0.25 [-0.3, -0.2]).");
}

TEST(Questions, MarkdownListsEachQuestionWithItsSourceAndAnswer) {
  EXPECT_EQ(open_questions_markdown({}, {}), "");
  ClaimOutcome a;
  a.claim = finding("a", {1, -1});
  a.verdict = "not run";
  const std::string md = open_questions_markdown({depth_question({"a"})}, {&a});
  EXPECT_NE(md.find("**Open questions**"), std::string::npos) << md;
  EXPECT_NE(md.find("- *\"Does it hold deeper?\"* (open question 1) Post-norm's TVD against "
                    "pre-norm's: not run.\n"),
            std::string::npos)
      << md;
}

}  // namespace
}  // namespace normlab::claims
