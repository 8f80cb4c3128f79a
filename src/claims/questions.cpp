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

// One finding as an item of its part's sentence (questions.hpp): what is said of it, where,
// and its figure after the place for a difference ("lower", "at L = 2", " (-0.1 [...])").
struct Item {
  std::string head, place, tail;
  bool measured = false;
  bool same_words(const Item& o) const { return head == o.head && tail == o.tail; }
};

Item item(const ClaimOutcome* c, const std::string& where) {
  if (c == nullptr) return {"not selected", where, "", false};
  if (c->verdict != "measured") return {c->verdict, where, "", false};
  const PairStatistic& st = c->evaluation.statistic;
  const std::string figure = effect_text(st.effect, st.low, st.high);
  if (!is_difference(c->claim)) return {figure, where, "", true};
  const char* word = st.high < 0 ? "lower" : st.low > 0 ? "higher" : "no difference resolved";
  return {word, where, " (" + figure + ")", true};
}

// Consecutive items that say the same words, one phrase with their places: "0 [0, 0] at L = 2,
// at L = 4 and at L = 8".
std::string phrases(const std::vector<Item>& items) {
  std::vector<std::string> out;
  for (size_t i = 0; i < items.size();) {
    size_t j = i + 1;
    while (j < items.size() && items[j].same_words(items[i])) ++j;
    std::vector<std::string> places;
    for (size_t k = i; k < j; ++k) {
      if (!items[k].place.empty()) places.push_back(items[k].place);
    }
    std::string where;
    for (size_t k = 0; k < places.size(); ++k) {
      where += (k == 0 ? " " : k + 1 == places.size() ? " and " : ", ") + places[k];
    }
    out.push_back(items[i].head + where + items[i].tail);
    i = j;
  }
  return fmt::format("{}", fmt::join(out, "; "));
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
    std::vector<Item> items;
    for (size_t i = 0; i < part.findings.size(); ++i) {
      items.push_back(item(outcome_of(part.findings[i], outcomes), part.places[i]));
    }
    // Nothing measured, all for one reason: the reason once, without the places.
    const bool one_reason =
        !items.front().measured && std::all_of(items.begin(), items.end(), [&](const Item& it) {
          return it.same_words(items.front());
        });
    sentences.push_back(
        fmt::format("{}: {}.", part.subject, one_reason ? items.front().head : phrases(items)));
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
