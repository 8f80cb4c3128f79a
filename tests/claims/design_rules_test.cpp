// D2's dense length grid, D3's seed count, and the shipped length-generalization studies
// evaluating D2's grid (docs/claims.md, "Design rules (2026-11-27)").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "normlab/claims/design_rules.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/experiment/overrides.hpp"
#include "normlab/experiment/sweep.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/probes/line_fit.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab::claims {
namespace {

TEST(DenseLengthGrid, StepsOfAQuarterRoundedUp) {
  // 16·1.25^k: 20, 25, 31.25, 39.06, 48.83, 61.04, 76.29, 95.37, 119.2, 149.0, 186.3, 232.8
  EXPECT_EQ(dense_length_grid(16, 256, LengthRange{}),
            (std::vector<int64_t>{20, 25, 32, 40, 49, 62, 77, 96, 120, 150, 187, 233}));
  // Even lengths only (Dyck): 50, 62.5, 78.1, 97.7, 122.1, 152.6, 190.7, 238.4, 298.0
  EXPECT_EQ(dense_length_grid(40, 320, LengthRange{2, LengthRange{}.max, 2}),
            (std::vector<int64_t>{50, 64, 80, 98, 124, 154, 192, 240, 300}));
  // 12 → 15, 18.75, 23.4, 29.3; 36.6 is past 31.
  EXPECT_EQ(dense_length_grid(12, 31, LengthRange{}), (std::vector<int64_t>{15, 19, 24, 30}));
  EXPECT_TRUE(dense_length_grid(16, 19, LengthRange{}).empty());
}

TEST(DenseLengthGrid, NeighboursAtMostAQuarterApart) {
  const std::vector<int64_t> g = dense_length_grid(16, 16384, LengthRange{});
  ASSERT_FALSE(g.empty());
  EXPECT_LE(g.front(), 20);
  EXPECT_GT(g.back(), 16384 / 1.25);
  for (size_t i = 1; i < g.size(); ++i) {
    EXPECT_GT(g[i], g[i - 1]);
    EXPECT_LE(static_cast<double>(g[i]), 1.25 * static_cast<double>(g[i - 1]) + 1.0) << g[i];
  }
}

TEST(SeedsToResolve, SmallestSeedCountWhoseHalfWidthIsDelta) {
  // sd = δ: n must satisfy t_{n−1}·√2 ≤ √n. Tables: t_9 = 2.262 → 3.199 > √10 = 3.162;
  // t_10 = 2.228 → 3.151 ≤ √11 = 3.317. So n = 11.
  EXPECT_EQ(seeds_to_resolve(0.05, 0.05, kMinSeeds, kMaxSeeds), 11);
  // A quiet baseline keeps the minimum: t_4·√2·0.01/√5 = 0.0176 ≤ 0.05.
  EXPECT_EQ(seeds_to_resolve(0.01, 0.05, kMinSeeds, kMaxSeeds), 5);
  // A noisy one hits the cap: t_19·√2·0.2/√20 = 0.132 > 0.05.
  EXPECT_EQ(seeds_to_resolve(0.2, 0.05, kMinSeeds, kMaxSeeds), 20);
  EXPECT_EQ(seeds_to_resolve(0.0, 0.05, kMinSeeds, kMaxSeeds), 5);
  EXPECT_THROW(seeds_to_resolve(0.1, 0.0, kMinSeeds, kMaxSeeds), std::invalid_argument);
}

TEST(SeedsToResolve, OnASyntheticPilot) {
  // Five pilot seeds of a baseline's accuracy beyond training; δ = 0.05·|1 − 0| for accuracy.
  const std::vector<double> pilot = {0.62, 0.58, 0.66, 0.60, 0.64};
  const double mean = std::accumulate(pilot.begin(), pilot.end(), 0.0) / 5.0;
  double ss = 0;
  for (double v : pilot) ss += (v - mean) * (v - mean);
  const double sd = std::sqrt(ss / 4.0);  // 0.03162
  const int n = seeds_to_resolve(sd, kResolvedFraction * 1.0, kMinSeeds, kMaxSeeds);
  // The rule's own inequality holds at n and fails at n − 1.
  auto half = [&](int k) {
    return student_t_quantile(0.975, k - 1) * std::sqrt(2.0) * sd / std::sqrt(k);
  };
  EXPECT_LE(half(n), 0.05);
  EXPECT_GT(half(n - 1), 0.05);
  EXPECT_EQ(n, 6);  // t_5 = 2.571: 0.0469 ≤ 0.05; t_4 = 2.776: 0.0555 > 0.05
}

// The studies whose claims compare schemes beyond the training lengths, and the task settings
// (`--set`) the ledger runs them at.
struct LengthStudy {
  std::string file;
  std::vector<std::string> sets;
  int64_t step =
      0;  // the grid's length step when one eval list serves several tasks (0: the task's)
};

std::vector<LengthStudy> length_studies() {
  std::vector<LengthStudy> s = {{"resharpen_set_complement", {}}, {"resharpen_max_retrieval", {}},
                                {"resharpen_dyck", {}},           {"vanishing_variance_argmax", {}},
                                {"vanishing_variance_dict", {}},  {"open_resharpen_depth", {}},
                                {"open_resharpen_depth_dyck", {}}};
  // One eval list serves the seven languages; 2 and 5 have even lengths only.
  for (int n = 1; n <= 7; ++n) {
    s.push_back({"resharpen_tomita", {"task.n=" + std::to_string(n)}, 2});
  }
  return s;
}

TEST(DesignRules, ShippedLengthStudiesEvaluateTheDenseGrid) {
  for (const LengthStudy& s : length_studies()) {
    const auto path =
        std::filesystem::path(NORMLAB_SOURCE_DIR) / "experiments" / (s.file + ".toml");
    const Experiment e = read_swept_experiment(
        [&] { return load_experiment_document(path, "full", s.sets); }, path.string());
    const std::unique_ptr<Task> task = make_task_from_json(e.task);
    const std::vector<int64_t>& have = e.eval.lengths;
    const int64_t max_length = *std::max_element(have.begin(), have.end());
    LengthRange range = task->length_range();
    if (s.step > 0) range.step = s.step;
    for (int64_t n : dense_length_grid(e.train.max_len, max_length, range)) {
      EXPECT_NE(std::find(have.begin(), have.end(), n), have.end())
          << s.file << " " << (s.sets.empty() ? "" : s.sets[0]) << ": length " << n
          << " of D2's grid is not evaluated";
    }
  }
}

}  // namespace
}  // namespace normlab::claims
