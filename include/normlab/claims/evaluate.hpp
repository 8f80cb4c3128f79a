// From a study's result file to a claim's per-pair values and verdict (docs/claims.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "normlab/claims/claims_file.hpp"
#include "normlab/claims/decision.hpp"
#include "normlab/claims/informativeness.hpp"
#include "normlab/io/csv.hpp"

namespace normlab::claims {

struct PairValue {
  std::string pair;  // the value of the claim's pair_by column, e.g. a seed
  double value = 0;  // Σ weight · reduce(rows of this pair matching the term's filter)
};

// What the special filter values compare against, from the study's experiment.json.
struct StudyFacts {
  int64_t max_train_length = 0;  // train.max_len: "beyond_training", "within_training"
  int64_t last_step = 0;         // train.steps: "last_step", "second_half"
  int64_t decay_start = -1;      // the WSD decay's first step: "decay_start" (-1: not wsd)
};

// The cell as a number, if all of it is one.
std::optional<double> cell_number(const std::string& cell);
// The cell as an integer, if all of it is a number that is one exactly, within ±2^53 (a
// length, a count): "64" and "64.0" are 64; "1e300", "6.5", "nan" are none.
std::optional<int64_t> cell_integer(const std::string& cell);

// Whether a CSV cell meets one filter condition; `facts` only for the special values.
bool filter_matches(const FilterValue& f, const std::string& cell,
                    const std::optional<StudyFacts>& facts);

// The per-pair values of claim `c` over `table`, pairs in ascending order (numeric when every
// pair is a number). `facts` are needed only by the special filter values. InputError naming
// the claim and the term when a term matches no rows for some pair, or when a reduction
// cannot be computed; with c.drop_incomplete_pairs such a pair (or, for a term with no rows at
// all, every pair) is left out instead and named in `dropped`, when given.
std::vector<PairValue> pair_values(const Claim& c, const CsvTable& table,
                                   std::optional<StudyFacts> facts,
                                   std::vector<std::string>* dropped = nullptr);

// Applies one reduction to the values (and, for loglog_slope, the x values) of a term's rows;
// throws std::invalid_argument saying why when it is undefined (e.g. cv of one row).
double reduce_values(Reduce r, const std::vector<double>& values, const std::vector<double>& x);

// The study's facts from STUDY_DIR/experiment.json.
StudyFacts study_facts(const std::filesystem::path& study_dir);

struct ClaimEvaluation {
  std::vector<PairValue> pairs;
  std::vector<std::string> dropped;  // pairs left out (drop_incomplete_pairs), ascending
  PairStatistic statistic;
  Informativeness informativeness;  // design rule D1; applies = false where it does not govern
  Decision decision;
};

// Reads STUDY_DIR/<c.source>, computes the pairs, checks D1 where it governs the claim (an
// untestable claim is not decided by its interval) and decides. `decided_by_pilot`: the folder
// holds a pilot that decides the study (design rule D6, the baseline arm alone), so an
// untestable claim has no pairs.
ClaimEvaluation evaluate_claim(const Claim& c, const std::filesystem::path& study_dir,
                               bool decided_by_pilot = false);

}  // namespace normlab::claims
