// Two claims ledgers side by side (the claims.json of two `normlab claims run`s, e.g. the
// committed docs/claims.json and a ledger re-decided from new tables): every claim of either
// with its verdict and effect [95% interval] before and after, and what moved.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace normlab::claims {

// One claim as a claims.json gives it.
struct LedgerEntry {
  std::string verdict;
  std::string effect;  // "effect [low, high]" as claims.md prints it, "–" without pairs
  int n = 0;           // pairs (seeds) the effect is over
};

// What moved between two ledgers for one claim.
enum class Moved {
  none,     // same verdict, same effect and interval (to claims.md's 4 significant digits)
  effect,   // same verdict, another effect or interval
  verdict,  // another verdict
  added,    // only in the second ledger
  removed,  // only in the first
};
std::string to_string(Moved m);

struct ClaimChange {
  std::string id;
  std::string paper;
  std::optional<LedgerEntry> before, after;
  Moved moved = Moved::none;
};

// Every claim of `before` and `after`, in `after`'s order, then those only in `before`;
// InputError naming `before_name` or `after_name` when one is not a claims ledger.
std::vector<ClaimChange> diff_ledgers(const nlohmann::json& before, const nlohmann::json& after,
                                      const std::string& before_name,
                                      const std::string& after_name);

// A one-line count of each kind of move, then one Markdown table row per claim.
std::string diff_markdown(const std::vector<ClaimChange>& changes);

}  // namespace normlab::claims
