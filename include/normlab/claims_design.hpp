// The design rules that set a study's lengths and seeds before it runs (docs/claims.md,
// "Design rules (2026-11-27)"): D2's dense length grid and D3's seed count from a pilot.
#pragma once

#include <cstdint>
#include <vector>

#include "normlab/task.hpp"

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

}  // namespace normlab::claims
