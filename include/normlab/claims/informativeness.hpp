// Design rule D1, informativeness (docs/claims.md, "Design rules"): a claim about lengths beyond
// training is decided only where its baseline arm (the terms with negative weight) is neither at
// the metric's floor (chance level) nor at its ceiling (perfect score).
//
//   m(n)  the mean over pairs (seeds) of the baseline arm's metric at length n
//   f, c  the metric's floor and ceiling (docs/tasks.md, "Floor and ceiling")
//   ε     0.05 · |c − f|
//   n is informative when m(n) lies strictly between f + ε and c − ε (f − ε and c + ε for a
//   lower-is-better metric, c < f); otherwise it sits within ε of (or beyond) a bound.
//
// With at least 2 informative lengths the claim is decided by the interval as before; otherwise
// it is untestable (ceiling) or untestable (floor): the bound more of the uninformative lengths
// sit at, the floor on a tie.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "normlab/claims/claims_file.hpp"
#include "normlab/claims/decision.hpp"
#include "normlab/io/csv.hpp"

namespace normlab::claims {

struct StudyFacts;

// The floor f (chance level) and ceiling c (perfect score) of one metric of one task at task
// length n. A lower-is-better metric (TVD, loss) has c < f.
struct MetricScale {
  double floor = 0;
  double ceiling = 0;
  // Non-empty: the floor depends on the samples and is the mean of this metric's rows at the
  // same length (the evaluator's chance row, e.g. "tvd_chance"); `floor` is then unused.
  std::string chance_row;
  // How the floor is defined, the same text at every length, for the ledger, e.g. "1/v (v = 32)"
  std::string rule;
  // True: the floor depends on the samples and is the accuracy, on the study's own evaluation
  // sequences at the length (recomputed from experiment.json), of the best answer that does
  // not read the input (BlindAnswer, the Chomsky-hierarchy tasks); `floor` is then unused.
  bool blind_answer = false;
};

// The scale of `metric` for the task of an experiment.json ({"name": ..., parameters}) at task
// length n; nullopt where docs/tasks.md defines none (e.g. dyck's all_legal).
std::optional<MetricScale> metric_scale(const nlohmann::json& task, const std::string& metric,
                                        int64_t n);

// Where one length beyond training sits.
enum class Place { informative, ceiling, floor };
std::string to_string(Place p);

struct LengthCheck {
  int64_t length = 0;
  double baseline = 0;  // m(n)
  double floor = 0;     // f
  double ceiling = 0;   // c
  double margin = 0;    // ε = 0.05 · |c − f|
  Place place = Place::informative;
};

// The check of one claim; `applies` false for a claim D1 does not govern.
struct Informativeness {
  bool applies = false;
  std::string metric;                // the baseline arm's metric
  std::string baseline;              // the baseline terms, as written
  std::string floor_rule;            // where f comes from
  std::vector<LengthCheck> lengths;  // ascending

  int informative() const;
  // untestable_ceiling or untestable_floor with fewer than 2 informative lengths; else nullopt
  // (the claim is decided by its interval).
  std::optional<Verdict> untestable() const;
  // One sentence: how many lengths are informative, and where the others sit.
  std::string summary() const;
};

// D1 governs a claim that reads results.csv, has a term selecting length = "beyond_training"
// and a baseline arm (a term with negative weight; a one-arm claim has none to check).
bool informativeness_applies(const Claim& c);

// Checks claim `c` against `table` (its results.csv). `experiment` is the study's
// experiment.json: its task gives the scale, and when the table has no chance rows (tables
// written before the evaluator recorded them) its task and eval settings give them again,
// from the same samples (evaluate_chance). InputError naming the claim when the baseline arm
// selects no single metric, matches no rows, or its metric has no floor and ceiling.
Informativeness check_informativeness(const Claim& c, const CsvTable& table,
                                      const StudyFacts& facts, const nlohmann::json& experiment);

}  // namespace normlab::claims
