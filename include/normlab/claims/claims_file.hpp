// The claims ledger (docs/claims.md): one TOML file per paper, claims/<paper>.toml, each claim
// a sentence of the paper, the study that tests it, and the rule that decides it from the
// study's result files.
//
//   per pair (a value of `pair_by`, e.g. a seed):  v = Σ_terms weight · reduce(matching rows)
//   over the pairs: mean ± t_{0.975, n−1} · s / √n   → reproduced, contradicted or inconclusive
//                                                       (a finding: measured)
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace normlab::claims {

// One condition on a CSV column.
struct FilterValue {
  // beyond_training / within_training: a length above / at most the study's longest training
  // length; last_step: the study's last step; decay_start: the first step of its WSD decay;
  // second_half: a step after half of the study's steps (2 · step > last step).
  enum class Kind {
    text,
    number,
    one_of,
    beyond_training,
    within_training,
    last_step,
    decay_start,
    second_half
  };
  Kind kind = Kind::text;
  std::string text;                  // Kind::text
  double number = 0;                 // Kind::number: compared numerically
  std::vector<FilterValue> choices;  // Kind::one_of: any of these (text or number)
};

// How a term turns the rows of one pair into one number.
// best_mean: the rows grouped by the column `by`, each group's mean, the largest of them (a
// best-of rule: e.g. the best variant of a seed, each variant averaged over its lengths).
enum class Reduce { mean, cv, max_over_min, loglog_slope, best_mean };

struct Term {
  double weight = 1.0;
  std::map<std::string, FilterValue> filter;  // column → condition (all must hold)
  Reduce reduce = Reduce::mean;
  std::string value = "value";  // the column reduced
  std::string x;                // loglog_slope: the column regressed on
  std::string by;               // best_mean: the column whose values form the groups
  std::string description;      // the term as written, for messages
};

// What a claim expects of its effect; `measure` makes it a finding: a quantity measured with
// its interval, no side expected (docs/claims.md, "Findings").
struct Expectation {
  enum class Kind { negative, positive, band, measure };
  Kind kind = Kind::negative;
  double low = 0, high = 0;  // Kind::band
};

struct Claim {
  std::string id;
  std::string paper;        // arXiv id
  std::string paper_title;  // the claims file's title ("" if none)
  std::string sentence;
  std::filesystem::path study;  // the experiment file, as resolved (see read_paper)
  std::string study_text;       // as written in the claims file
  std::vector<std::string> sets;
  std::string source = "results.csv";
  std::string pair_by = "seed";
  std::vector<Term> terms;
  Expectation expect;
  int min_pairs = 2;
  // The study has no sampling randomness (e.g. particle dynamics from the symmetric
  // initialization, the same for every seed): the interval is [min, max] of the pair values,
  // one pair is enough, and no Student-t widening applies.
  bool deterministic = false;
  // Each pair's value is 0 or 1 (e.g. whether a seed's run diverged): the effect is the share
  // of pairs with 1 and the interval the exact binomial one (Clopper–Pearson,
  // claims/decision.hpp), not a Student-t interval, which is [0, 0] when no seed diverged.
  bool share = false;
  // A negative control (design rule D4, docs/claims.md): the literature's negative result,
  // checked by the same machinery; the answer lists it apart from the papers' claims.
  bool negative_control = false;
  // A pair that some term has no rows for (e.g. a seed whose run diverged and left no metrics)
  // is left out and named in the reason, instead of stopping the claim with an error.
  bool drop_incomplete_pairs = false;
  std::string choice;  // where normlab's protocol departs from the paper ("" if nowhere)
  // A finding's cell in its paper's grid (claims.md, the report): row and column labels, e.g.
  // a task and a scheme; both empty when the finding is in no grid.
  std::string grid_row, grid_column;
  bool finding() const { return expect.kind == Expectation::Kind::measure; }
  // "claim", "finding" or "negative control": the kind claims.json and the Python DataFrame
  // give, and the section claims.md lists it in.
  std::string kind() const;
  std::string where;  // "FILE:LINE" of the claim, for messages
};

// One part of an open question's answer: findings that measure one quantity at several places
// (e.g. post − pre TVD at each depth), stated together in one sentence.
struct QuestionPart {
  std::string subject;  // the quantity, e.g. "Post-norm's TVD beyond training, against pre-norm's"
  std::vector<std::string> places;    // per finding: where it is measured, "at L = 2" (or "")
  std::vector<std::string> findings;  // per finding: its id, a finding of the same paper
};

// An open question of the paper and the findings that answer it (docs/claims.md, "Open
// questions"); claims.md states the answer in plain words from the findings' outcomes.
struct Question {
  std::string paper;   // arXiv id
  std::string asks;    // the paper's words
  std::string source;  // where the paper asks it, e.g. "open question 1"
  std::vector<QuestionPart> parts;
  std::string where;  // "FILE:LINE", for messages
};

struct Paper {
  std::string arxiv;
  std::string title;
  std::vector<Claim> claims;
  std::vector<Question> questions;
};

// Reads claims/<paper>.toml strictly: unknown keys, wrong types and missing required keys are
// InputErrors "FILE:LINE: ..." saying what is allowed. A relative `study` path is resolved
// against `root` (the folder that holds claims/ and experiments/).
Paper read_paper(const std::filesystem::path& file, const std::filesystem::path& root);

// Every claims/*.toml under `claims_dir`, sorted by file name; claim ids must be unique.
std::vector<Paper> read_ledger(const std::filesystem::path& claims_dir);

std::string to_string(Reduce r);
std::string to_string(const Expectation& e);

}  // namespace normlab::claims
