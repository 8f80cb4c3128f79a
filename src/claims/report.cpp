// OUT/claims.json and OUT/claims.md from a ledger run (claims/ledger.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <utility>

#include "normlab/claims/ledger.hpp"
#include "normlab/claims/questions.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/printable.hpp"

namespace normlab::claims {
namespace {

std::string number(double v) {
  return std::isfinite(v) ? fmt::format("{:.4g}", v) : "–";
}

// Design rule D1's check as claims.json gives it; null where D1 does not govern the claim.
nlohmann::json informativeness_json(const Informativeness& info) {
  if (!info.applies) return nullptr;
  nlohmann::json lengths = nlohmann::json::array();
  for (const LengthCheck& l : info.lengths) {
    lengths.push_back({{"length", l.length},
                       {"baseline_mean", l.baseline},
                       {"floor", l.floor},
                       {"ceiling", l.ceiling},
                       {"margin", l.margin},
                       {"place", to_string(l.place)}});
  }
  return {{"metric", info.metric},         {"baseline", info.baseline},
          {"floor_rule", info.floor_rule}, {"informative", info.informative()},
          {"summary", info.summary()},     {"lengths", lengths}};
}

// D1's check in claims.md: one line, then m(n), f, c and ε per length.
std::string informativeness_markdown(const Informativeness& info) {
  if (!info.applies) return "";
  std::string md = fmt::format(
      "- informativeness (design rule D1): {}; baseline: {}; floor f: {}\n\n"
      "  | n | m(n) | f | c | ε | place |\n  | --- | --- | --- | --- | --- | --- |\n",
      info.summary(), info.baseline, info.floor_rule);
  for (const LengthCheck& l : info.lengths) {
    md += fmt::format("  | {} | {} | {} | {} | {} | {} |\n", l.length, number(l.baseline),
                      number(l.floor), number(l.ceiling), number(l.margin), to_string(l.place));
  }
  return md + "\n";
}

// The claim's sentence without its final period, for a list inside a paragraph.
std::string clause(const std::string& sentence) {
  return !sentence.empty() && sentence.back() == '.' ? sentence.substr(0, sentence.size() - 1)
                                                     : sentence;
}

// "A; B; C", or "" without items; a clause that several claims share is written once, with
// their ids.
std::string joined(const std::vector<std::pair<std::string, std::string>>& clause_and_id) {
  std::vector<std::string> clauses;
  std::vector<std::vector<std::string>> ids;
  for (const auto& [clause, id] : clause_and_id) {
    const auto it = std::find(clauses.begin(), clauses.end(), clause);
    if (it == clauses.end()) {
      clauses.push_back(clause);
      ids.push_back({id});
    } else {
      ids[static_cast<size_t>(it - clauses.begin())].push_back(id);
    }
  }
  for (size_t i = 0; i < clauses.size(); ++i) {
    if (ids[i].size() > 1) clauses[i] += fmt::format(" ({})", fmt::join(ids[i], ", "));
  }
  return fmt::format("{}", fmt::join(clauses, "; "));
}

std::string effect_cell(const ClaimOutcome& c) {
  const PairStatistic& st = c.evaluation.statistic;
  // No pairs (not run, study failed, error): no effect to show, not a zero.
  return c.evaluation.pairs.empty() ? "–" : effect_text(st.effect, st.low, st.high);
}

// The findings that name a grid cell (`grid` in the claims file) as one table: rows and columns
// in the order they first appear; a cell holds the effect [95% interval], or the verdict where
// nothing was measured.
std::string findings_grid(const std::vector<const ClaimOutcome*>& claims) {
  std::vector<std::string> rows, columns;
  std::map<std::pair<std::string, std::string>, std::string> cells;
  for (const ClaimOutcome* c : claims) {
    if (c->claim.grid_row.empty()) continue;
    if (std::find(rows.begin(), rows.end(), c->claim.grid_row) == rows.end()) {
      rows.push_back(c->claim.grid_row);
    }
    if (std::find(columns.begin(), columns.end(), c->claim.grid_column) == columns.end()) {
      columns.push_back(c->claim.grid_column);
    }
    cells[{c->claim.grid_row, c->claim.grid_column}] =
        c->verdict == "measured" ? effect_cell(*c) : c->verdict;
  }
  if (rows.empty()) return "";
  std::string header = "|  |", rule = "| --- |";
  for (const std::string& column : columns) {
    header += " " + markdown_cell(column) + " |";
    rule += " --- |";
  }
  std::string md =
      "\n**Findings as a grid** (each cell: effect [95% interval], or the verdict where nothing "
      "was measured):\n\n" +
      header + "\n" + rule + "\n";
  for (const std::string& row : rows) {
    md += "| " + markdown_cell(row) + " |";
    for (const std::string& column : columns) {
      const auto it = cells.find({row, column});
      md += " " + (it == cells.end() ? std::string("–") : it->second) + " |";
    }
    md += "\n";
  }
  return md;
}

// One paper's answer: a paragraph saying what holds, what does not, what cannot be tested here
// and why, and what stays open; then its claims with verdict and effect.
std::string paper_answer(const std::vector<const ClaimOutcome*>& claims,
                         const std::vector<Question>& questions) {
  std::vector<std::pair<std::string, std::string>> holds, fails;
  std::vector<std::string> ceiling, floor, open, other, controls_hold, controls_fail;
  for (const ClaimOutcome* c : claims) {
    const std::string& v = c->verdict;
    if (c->claim.finding()) continue;  // their own table, below
    if (c->claim.negative_control && (v == "reproduced" || v == "contradicted")) {
      (v == "reproduced" ? controls_hold : controls_fail).push_back(c->claim.id);
    } else if (v == "reproduced") {
      holds.push_back({clause(c->claim.sentence), c->claim.id});
    } else if (v == "contradicted") {
      fails.push_back({clause(c->claim.sentence), c->claim.id});
    } else if (v == "untestable (ceiling)") {
      ceiling.push_back(c->claim.id);
    } else if (v == "untestable (floor)") {
      floor.push_back(c->claim.id);
    } else if (v == "inconclusive") {
      open.push_back(c->claim.id);
    } else {
      other.push_back(fmt::format("{} ({})", c->claim.id, v));
    }
  }
  std::vector<std::string> parts;
  if (!holds.empty()) {
    parts.push_back(fmt::format("**Holds here** ({}): {}.", holds.size(), joined(holds)));
  }
  if (!fails.empty()) {
    parts.push_back(fmt::format("**Does not hold here**, the interval on the other side ({}): {}.",
                                fails.size(), joined(fails)));
  }
  if (!ceiling.empty() || !floor.empty()) {
    std::vector<std::string> why;
    if (!ceiling.empty()) {
      why.push_back(
          fmt::format("the baseline is already at the metric's perfect score beyond "
                      "training, so no scheme can beat it ({})",
                      fmt::join(ceiling, ", ")));
    }
    if (!floor.empty()) {
      why.push_back(
          fmt::format("the baseline is at chance level beyond training, outside the "
                      "range where the study compares schemes ({})",
                      fmt::join(floor, ", ")));
    }
    parts.push_back(fmt::format("**Cannot be tested here** ({}): {}.",
                                ceiling.size() + floor.size(), fmt::join(why, "; ")));
  }
  if (!open.empty()) {
    parts.push_back(
        fmt::format("**Open** ({}): at this number of seeds the 95% interval admits "
                    "both outcomes ({}).",
                    open.size(), fmt::join(open, ", ")));
  }
  if (!controls_hold.empty() || !controls_fail.empty()) {
    parts.push_back(fmt::format(
        "**Negative controls** (the literature's negative results, design rule D4): {} of {} "
        "as the literature has them{}.",
        controls_hold.size(), controls_hold.size() + controls_fail.size(),
        controls_fail.empty() ? "" : fmt::format("; not so: {}", fmt::join(controls_fail, ", "))));
  }
  if (!other.empty()) parts.push_back(fmt::format("**Not decided**: {}.", fmt::join(other, ", ")));
  std::string md;
  const bool any_claim = std::any_of(claims.begin(), claims.end(),
                                     [](const ClaimOutcome* c) { return !c->claim.finding(); });
  if (any_claim) {
    md = fmt::format(
        "{}\n\n| claim | verdict | effect [95% interval] | n |\n| --- | --- | --- | --- |\n",
        fmt::join(parts, " "));
    for (const ClaimOutcome* c : claims) {
      if (c->claim.finding()) continue;
      md += fmt::format("| {} | {} | {} | {} |\n", markdown_cell(c->claim.id), c->verdict,
                        effect_cell(*c), c->evaluation.statistic.n);
    }
  }
  // Findings: quantities the paper leaves open, measured with their interval (no side
  // expected), or untestable where design rule D1 says so.
  std::string findings;
  for (const ClaimOutcome* c : claims) {
    if (!c->claim.finding()) continue;
    findings += fmt::format("| {} | {} | {} | {} | {} |\n", markdown_cell(c->claim.id),
                            markdown_cell(clause(c->claim.sentence)), c->verdict, effect_cell(*c),
                            c->evaluation.statistic.n);
  }
  if (!findings.empty()) {
    md += fmt::format(
        "{}**Findings**: quantities the paper leaves open, measured here with their 95% interval "
        "(no side expected; docs/claims.md, \"Findings\").\n\n"
        "| finding | what is measured | result | effect [95% interval] | n |\n"
        "| --- | --- | --- | --- | --- |\n{}",
        md.empty() ? "" : "\n", findings);
  }
  md += findings_grid(claims);
  md += open_questions_markdown(questions, claims);
  return md;
}

// The first screen: per paper (in the ledger's order), its answer.
std::string answers_markdown(const LedgerResult& r) {
  std::vector<std::string> papers;
  for (const ClaimOutcome& c : r.claims) {
    if (std::find(papers.begin(), papers.end(), c.claim.paper) == papers.end()) {
      papers.push_back(c.claim.paper);
    }
  }
  std::string md;
  for (const std::string& paper : papers) {
    std::vector<const ClaimOutcome*> claims;
    for (const ClaimOutcome& c : r.claims) {
      if (c.claim.paper == paper) claims.push_back(&c);
    }
    std::vector<Question> questions;
    for (const Question& q : r.questions) {
      if (q.paper == paper) questions.push_back(q);
    }
    const std::string& title = claims.front()->claim.paper_title;
    md += fmt::format("## {}{}arXiv {}{}\n\n{}\n", title, title.empty() ? "" : " (", paper,
                      title.empty() ? "" : ")", paper_answer(claims, questions));
  }
  return md;
}

}  // namespace

std::string effect_text(double effect, double low, double high) {
  return fmt::format("{} [{}, {}]", number(effect), number(low), number(high));
}

nlohmann::json to_json(const LedgerResult& r) {
  nlohmann::json studies = nlohmann::json::array();
  for (const StudyRun& s : r.studies) {
    studies.push_back({{"study", s.file.string()},
                       {"sets", s.sets},
                       {"tier", s.tier},
                       // OUT, the ledger's --out: no machine path in a kept ledger
                       {"folder", "OUT/" + s.folder.filename().string()},
                       {"command", s.command()},
                       {"seconds", s.seconds},
                       {"ok", s.ok},
                       {"status", s.status()},
                       {"failure", s.failure}});
  }
  nlohmann::json claims = nlohmann::json::array();
  for (const ClaimOutcome& c : r.claims) {
    const StudyRun& s = r.studies[c.study];
    const PairStatistic& st = c.evaluation.statistic;
    nlohmann::json values = nlohmann::json::array();
    for (const PairValue& p : c.evaluation.pairs) {
      values.push_back({{c.claim.pair_by, p.pair}, {"value", p.value}});
    }
    const bool have = !c.evaluation.pairs.empty();
    claims.push_back(
        {{"id", c.claim.id},
         {"paper", c.claim.paper},
         {"sentence", c.claim.sentence},
         {"verdict", c.verdict},
         {"negative_control", c.claim.negative_control},
         {"kind", c.claim.kind()},
         {"grid", c.claim.grid_row.empty()
                      ? nlohmann::json()
                      : nlohmann::json{{"row", c.claim.grid_row}, {"column", c.claim.grid_column}}},
         {"reason", c.reason},
         {"expect", to_string(c.claim.expect)},
         {"effect", have ? nlohmann::json(st.effect) : nlohmann::json()},
         {"low", have ? nlohmann::json(st.low) : nlohmann::json()},
         {"high", have ? nlohmann::json(st.high) : nlohmann::json()},
         {"n", st.n},
         {"min_pairs", c.claim.min_pairs},
         {"pair_by", c.claim.pair_by},
         {"values", values},
         {"informativeness", informativeness_json(c.evaluation.informativeness)},
         {"tier", s.tier},
         {"study", c.claim.study_text},
         {"sets", s.sets},
         {"source", c.claim.source},
         {"command", s.command()},
         {"choice", c.claim.choice}});
  }
  std::vector<const ClaimOutcome*> outcomes;
  for (const ClaimOutcome& c : r.claims) outcomes.push_back(&c);
  nlohmann::json questions = nlohmann::json::array();
  for (const Question& q : r.questions) {
    nlohmann::json parts = nlohmann::json::array();
    for (const QuestionPart& p : q.parts) {
      parts.push_back({{"subject", p.subject}, {"places", p.places}, {"findings", p.findings}});
    }
    questions.push_back({{"paper", q.paper},
                         {"asks", q.asks},
                         {"source", q.source},
                         {"parts", parts},
                         {"answer", question_answer(q, outcomes)}});
  }
  return {{"tier", r.tier},
          {"decide_only", r.decide_only},
          {"studies", studies},
          {"claims", claims},
          {"questions", questions}};
}

std::string to_markdown(const LedgerResult& r) {
  const std::string how =
      r.decide_only
          ? fmt::format(
                "Written by `normlab claims run --tier {} --decide-only` (docs/claims.md) from "
                "the studies' kept tables; each study's command and wall time are those of the "
                "ledger run that ran it. Every verdict comes from that decision, none is set by "
                "hand.",
                r.tier)
          : fmt::format(
                "Written by `normlab claims run --tier {}` (docs/claims.md); every verdict comes "
                "from that run, none is set by hand.",
                r.tier);
  std::string md =
      fmt::format("# Claims ledger, tier {}\n\n{}\n\n{}", r.tier, how, answers_markdown(r));
  md += fmt::format(
      "## All claims\n\n"
      "Effect: the mean over pairs (seeds) of Σ weight · "
      "reduce(rows); interval: 95% Student t over the pairs (the range of the values for a "
      "deterministic claim, the exact binomial interval for a share of seeds). A claim is "
      "*reproduced* when the interval lies on the side the "
      "paper claims (or inside its band), *contradicted* when it lies on the other side (or "
      "outside the band), *inconclusive* otherwise; a finding (no side expected) is *measured*. A "
      "claim about lengths beyond training is "
      "*untestable (ceiling)* or *untestable (floor)* when fewer than 2 of those lengths are "
      "informative, its baseline arm (the terms with negative weight) within 5% of the "
      "floor-to-ceiling span of the metric's perfect score or of its chance level at the "
      "others (design rule D1); its details give m(n), f and c per length. Each claim's "
      "protocol choices follow its details below; each study's own tables follow the "
      "claims.\n\n"
      "| claim | paper | verdict | effect [95% interval] | n | command |\n"
      "| --- | --- | --- | --- | --- | --- |\n");
  for (const ClaimOutcome& c : r.claims) {
    md += fmt::format("| {} | {} | {} | {} | {} | `{}` |\n", markdown_cell(c.claim.id),
                      c.claim.paper, c.verdict, effect_cell(c), c.evaluation.statistic.n,
                      markdown_cell(r.studies[c.study].command()));
  }
  md += "\n## Studies\n\n| study | wall time | status |\n| --- | --- | --- |\n";
  for (const StudyRun& s : r.studies) {
    md += fmt::format("| `{}` | {} | {} |\n", markdown_cell(s.command()),
                      s.ran ? fmt::format("{:.1f} s", s.seconds) : "–", markdown_cell(s.status()));
  }
  md += "\n## Claims\n";
  for (const ClaimOutcome& c : r.claims) {
    md += fmt::format("\n### {} ({})\n\n> {}\n\n", c.claim.id, c.claim.paper, c.claim.sentence);
    md += fmt::format("- study: `{}`, source `{}`, pairs by `{}`\n", r.studies[c.study].command(),
                      c.claim.source, c.claim.pair_by);
    for (const Term& t : c.claim.terms) md += fmt::format("- term: {}\n", t.description);
    md += fmt::format("- expect: {} (at least {} pairs)\n", to_string(c.claim.expect),
                      c.claim.min_pairs);
    if (!c.evaluation.pairs.empty()) {
      std::vector<std::string> values;
      for (const PairValue& p : c.evaluation.pairs) {
        values.push_back(fmt::format("{} {}: {:.4g}", c.claim.pair_by, p.pair, p.value));
      }
      md += fmt::format("- per pair: {}\n", fmt::join(values, "; "));
    }
    md += informativeness_markdown(c.evaluation.informativeness);
    md += fmt::format("- **{}**: {}\n", c.verdict, c.reason);
    if (!c.claim.choice.empty()) md += fmt::format("- protocol choice: {}\n", c.claim.choice);
  }
  // The detail per study: each finished study's own summary.md (its tables of every metric,
  // weights and length, and its probe tables), under the study's folder name.
  md += "\n## Study tables\n";
  for (const StudyRun& s : r.studies) {
    const std::filesystem::path summary = s.folder / "summary.md";
    if (!s.ok || !std::filesystem::exists(summary)) continue;
    std::string text = read_file(summary);
    if (text.rfind("# ", 0) == 0) text = text.substr(std::min(text.find('\n'), text.size()));
    // Its figures (![alt](file.png)) are relative to the study's folder, not to claims.md (nor
    // to docs/results.md, its copy): left out.
    std::string tables;
    for (size_t start = 0; start < text.size();) {
      const size_t end = std::min(text.find('\n', start), text.size());
      if (text.compare(start, 2, "![") != 0) tables += text.substr(start, end + 1 - start);
      start = end + 1;
    }
    text = tables;
    md += fmt::format("\n### {}\n\n    $ {}\n{}", s.folder.filename().string(), s.command(), text);
  }
  return md;
}

}  // namespace normlab::claims
