#include "normlab/claims/questions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace normlab::claims {
namespace {

const ClaimOutcome* outcome_of(const std::string& id,
                               const std::vector<const ClaimOutcome*>& outcomes) {
  const auto it = std::find_if(outcomes.begin(), outcomes.end(),
                               [&](const ClaimOutcome* c) { return c->claim.id == id; });
  return it == outcomes.end() ? nullptr : *it;
}

// " at L = 2", or "" where the part has one finding and no place.
std::string place(const std::string& where) {
  return where.empty() ? "" : " " + where;
}

// One finding as an item of its part's sentence (questions.hpp).
std::string item(const ClaimOutcome& c, const std::string& where) {
  if (c.verdict != "measured") return c.verdict + place(where);
  const PairStatistic& st = c.evaluation.statistic;
  const std::string figure = effect_text(st.effect, st.low, st.high);
  if (!is_difference(c.claim)) return figure + place(where);
  const char* word = st.high < 0 ? "lower" : st.low > 0 ? "higher" : "no difference resolved";
  return fmt::format("{}{} ({})", word, place(where), figure);
}

}  // namespace

bool is_difference(const Claim& finding) {
  double sum = 0, scale = 0;
  for (const Term& t : finding.terms) {
    sum += t.weight;
    scale += std::abs(t.weight);
  }
  // The weights are written in decimal (e.g. 0.5, -0.25, -0.25): their sum is exact to a few
  // ulps of their total magnitude.
  return finding.terms.size() >= 2 && std::abs(sum) <= 1e-12 * scale;
}

std::string question_answer(const Question& q, const std::vector<const ClaimOutcome*>& outcomes) {
  std::vector<std::string> sentences;
  for (const QuestionPart& part : q.parts) {
    std::vector<std::string> items, verdicts;
    for (size_t i = 0; i < part.findings.size(); ++i) {
      const ClaimOutcome* c = outcome_of(part.findings[i], outcomes);
      items.push_back(c == nullptr ? "not selected" + place(part.places[i])
                                   : item(*c, part.places[i]));
      verdicts.push_back(c == nullptr ? "not selected" : c->verdict);
    }
    const bool one_reason =
        verdicts.front() != "measured" &&
        std::all_of(verdicts.begin(), verdicts.end(),
                    [&](const std::string& v) { return v == verdicts.front(); });
    sentences.push_back(
        fmt::format("{}: {}.", part.subject,
                    one_reason ? verdicts.front() : fmt::format("{}", fmt::join(items, "; "))));
  }
  return fmt::format("{}", fmt::join(sentences, " "));
}

std::string open_questions_markdown(const std::vector<Question>& questions,
                                    const std::vector<const ClaimOutcome*>& outcomes) {
  if (questions.empty()) return "";
  std::string md =
      "\n**Open questions**, answered by the findings above (a difference is *lower* or "
      "*higher* where its 95% interval excludes 0):\n\n";
  for (const Question& q : questions) {
    md += fmt::format("- *\"{}\"* ({}) {}\n", q.asks, q.source, question_answer(q, outcomes));
  }
  return md;
}

}  // namespace normlab::claims
