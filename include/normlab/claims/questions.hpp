// A paper's open questions answered in plain words from their findings' outcomes (docs/claims.md,
// "Open questions"). Per part, each finding becomes one item, with its place ("at L = 2"):
//   a difference (terms whose weights sum to 0, e.g. post − pre):
//       "lower at L = 2 (-0.12 [-0.16, -0.09])"   the 95% interval below 0
//       "higher at L = 2 (...)"                    above 0
//       "no difference resolved at L = 2 (...)"    0 inside it
//   a level (any other finding):  "0.98 [0.97, 0.99] at d = 39"
//   not measured:                 its verdict, "not run at L = 2"
// and a part reads "Subject: item; item; item." Consecutive items that read the same share one
// phrase ("0 [0, 0] at L = 2, at L = 4 and at L = 8"); a part none of whose findings was
// measured, all for the same reason, reads "Subject: not run.".
#pragma once

#include <string>
#include <vector>

#include "normlab/claims/claims_file.hpp"
#include "normlab/claims/ledger.hpp"

namespace normlab::claims {

// Whether the finding is a difference of two arms: at least two terms, weights summing to 0.
bool is_difference(const Claim& finding);

// The answer to `q`, one sentence per part, from the outcomes of its findings; a finding not
// among `outcomes` reads "not selected".
std::string question_answer(const Question& q, const std::vector<const ClaimOutcome*>& outcomes);

// claims.md's "Open questions" list for one paper's questions: each the paper's words, where it
// asks them, and the answer; "" without questions.
std::string open_questions_markdown(const std::vector<Question>& questions,
                                    const std::vector<const ClaimOutcome*>& outcomes);

}  // namespace normlab::claims
