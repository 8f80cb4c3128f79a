// The design rules that set a study's lengths and seeds before it runs (docs/claims.md,
// "Design rules (2026-11-27)"): D2's dense length grid, D3's seed count from a pilot and D6's
// study decided by its pilot.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "normlab/claims/claims_file.hpp"
#include "normlab/claims/evaluate.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab::claims {

// D2: the lengths beyond the training maximum L, x_k = L·1.25^k (x_k = 1.25·x_{k−1} in double,
// x_0 = L), each rounded up to the task's next valid length, for k = 1, 2, … while
// x_k ≤ max_length; ascending, without repeats. `range.step` and `range.min` give the valid
// lengths.
std::vector<int64_t> dense_length_grid(int64_t train_max, int64_t max_length,
                                       const LengthRange& range);

// D3: the smallest n in [n_min, n_max] with t_{0.975, n−1}·√2·sd/√n ≤ delta, or n_max when
// none is (the cap). sd is the baseline arm's seed-to-seed standard deviation; √2·sd stands for
// the paired difference's (arms independent). delta > 0.
int seeds_to_resolve(double sd, double delta, int n_min, int n_max);

// D3's fixed numbers: δ = 0.05·|ceiling − floor|; 5 to 20 seeds; 10 at least where the kept
// full tier's interval is wider than its effect.
inline constexpr double kResolvedFraction = 0.05;
inline constexpr int kMinSeeds = 5;
inline constexpr int kMaxSeeds = 20;
inline constexpr int kSeedsWhenWide = 10;
// D3's pilot is seeds 1 to kPilotSeeds of the baseline arm; seed_count reads those rows alone,
// so a study folder that has since run more seeds gives the count its pilot gave.
inline constexpr int kPilotSeeds = 5;

// A claim's interval in a kept ledger (docs/claims.json): D3's "at least 10" applies where it
// is wider than the effect.
struct KeptInterval {
  double effect = 0;
  double low = 0;
  double high = 0;
  bool wide() const { return high - low > (effect < 0 ? -effect : effect); }
};

// D3 for one claim from the pilot in its study folder (the baseline arm's seeds 1 to
// kPilotSeeds in results.csv, and experiment.json): the baseline's per-seed claim value (its terms
// of negative weight, sign flipped), their sd, δ = 0.05·|c − f| averaged over the lengths beyond
// training (D1's floor and ceiling), and the seed count.
struct SeedCount {
  std::vector<PairValue> baseline;  // one per pilot seed
  double sd = 0;
  std::optional<double> delta;    // none: the claim has no floor and ceiling (no D1 check)
  int by_resolution = 0;          // seeds_to_resolve(sd, δ), or kMinSeeds without δ
  bool kept = false;              // the kept ledger has an interval for the claim
  bool wide = false;              // the kept interval is wider than its effect
  int seeds = 0;                  // max(by_resolution, 10 if wide), at most kMaxSeeds
  bool decided_by_pilot = false;  // D6: D1 finds the claim untestable on the pilot; `seeds`
                                  // is then the pilot's
  std::string rule;               // one sentence: which rule set `seeds`
};

// A claim without D1's check (no baseline arm beyond training with a floor and ceiling) needs no
// pilot: its count is the kept interval's rule alone. Otherwise InputError naming the claim
// when its study folder has no results.csv or the baseline arm matches no rows.
SeedCount seed_count(const Claim& c, const std::filesystem::path& study_dir,
                     const std::optional<KeptInterval>& kept);

// D6: whether the runs already in STUDY_DIR decide every one of `claims` (all the ledger's
// claims of that study): at least one is governed by D1, each claim D1 governs is untestable
// by its seed_count on at least kMinSeeds seeds of its baseline arm, and each other claim reads
// only those runs (every term has rows for kMinSeeds pairs or more: a grid's reference column
// on the baseline). False when the folder has no results.csv or a claim cannot be checked
// there (the study then runs, and its evaluation says why).
bool decided_by_pilot(const std::vector<Claim>& claims, const std::filesystem::path& study_dir);

}  // namespace normlab::claims
