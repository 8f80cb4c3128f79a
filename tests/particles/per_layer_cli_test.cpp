// The command-line side of per-layer Q, K, V, the radius fit and study seeds: the options, their
// errors (exit code 2, one line) and particles_summary.csv.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "particles/test_util.hpp"

namespace normlab::particles {
namespace {

using testing::CliResult;
using testing::expect_usage_error;
using testing::fresh_dir;
using testing::run_cli;

const std::string kPre = "particles --scheme pre --init random --n 6 --d 8 --beta 2 --t-end 3";

TEST(PerLayerCli, OptionErrors) {
  expect_usage_error(kPre + " --qkv kaiming --qkv-depth sideways",
                     "unknown Q/K/V depth 'sideways'; allowed: auto, per_layer, tied");
  expect_usage_error(kPre + " --qkv-depth per_layer",
                     "--qkv-depth per_layer needs --qkv kaiming, gaussian or file");
  expect_usage_error("particles --init random", "--scheme is required (or --from-checkpoint DIR)");
  expect_usage_error(kPre + " --batch 3", "--batch applies to --from-checkpoint only");
}

TEST(PerLayerCli, SummaryNamesTheDepthAndFitsTheRadius) {
  CliResult r = run_cli(kPre + " --qkv kaiming --summary --record-every 0.5");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("qkv kaiming (per_layer)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("radius growth: mean radius - r0 = C t^p"), std::string::npos)
      << r.output;
  r = run_cli(kPre + " --qkv kaiming --qkv-depth tied --summary --causal");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("qkv kaiming (tied)"), std::string::npos) << r.output;
}

TEST(PerLayerCli, PerLayerFileNeedsALayerPerUnitOfTime) {
  const std::filesystem::path dir = fresh_dir("per_layer_file");
  const std::string qkv = (dir / "qkv.txt").string();
  std::string text = "shape 2 1 3 2 2\n";
  for (int m = 0; m < 6; ++m) text += "1 0\n0 1\n";
  write_file_atomic(qkv, text);
  const std::string base =
      "particles --scheme pre --init random --n 3 --d 2 --qkv file "
      "--qkv-depth per_layer --qkv-file " +
      qkv;
  expect_usage_error(base + " --t-end 3",
                     qkv + ": 2 layers of Q, K, V, but --t-end 3 needs 3 (one layer per unit");
  const CliResult r = run_cli(base + " --t-end 2");
  EXPECT_EQ(r.code, 0) << r.output;
  // The tied reading of the same file sees the wrong shape.
  expect_usage_error(
      "particles --scheme pre --init random --n 3 --d 2 --qkv file --qkv-file " + qkv,
      "wrong shape (2, 1, 3, 2, 2) for the Q/K/V matrices (heads, 3, d, d)");
  std::filesystem::remove_all(dir);
}

TEST(PerLayerCli, StudyWritesOneSummaryRowPerRunAndSeed) {
  const std::filesystem::path dir = fresh_dir("study_seeds");
  const std::string file = (dir / "s.toml").string();
  write_file_atomic(file, R"(kind = "particles"
runs = ["pre", "pre_tied", "post"]
early_t = 0.5
[defaults]
init = "random"
n = 8
d = 8
beta = 2.0
qkv = "gaussian"
dt = 0.05
t_end = 6.0
record_every = 0.5
seeds = [3, 4]
[run.pre_tied]
scheme = "pre"
qkv_depth = "tied"
[run.post]
seeds = [5]
)");
  const std::filesystem::path out = dir / "out";
  const CliResult r =
      run_cli("run " + file + " --out " + out.string(), "NORMLAB_GNUPLOT=/nonexistent");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(out / "pre_seed3.csv"));
  EXPECT_TRUE(std::filesystem::exists(out / "pre_tied_seed4.csv"));
  EXPECT_TRUE(std::filesystem::exists(out / "post.csv"));
  const CsvTable t = read_csv_table(out / "particles_summary.csv");
  EXPECT_EQ(csv_row(t.columns),
            "run,label,scheme,seed,qkv,qkv_depth,n,d,beta,t_end,initial_dcos_dt,initial_mean_speed,"
            "early_t,mean_angle_moved_by_early_t,fit_t_from,fit_t_to,fit_points,exp_rate,exp_rss,"
            "power_exponent,power_rss,stretched_kappa,better_fit,radius_exponent,radius_ci_low,"
            "radius_ci_high,radius_fit_points,final_mean_radius,final_one_minus_mean_cos\n");
  ASSERT_EQ(t.rows.size(), 5u);
  // The first cells of row `row`: run, label, scheme, seed, qkv, qkv_depth, ...
  const auto first_cells = [&](size_t row, size_t count) {
    return std::vector<std::string>(t.rows[row].begin(), t.rows[row].begin() + count);
  };
  EXPECT_EQ(first_cells(0, 10),
            (std::vector<std::string>{"pre_seed3", "pre", "pre", "3", "gaussian", "per_layer", "8",
                                      "8", "2", "6"}));
  EXPECT_EQ(first_cells(1, 6),
            (std::vector<std::string>{"pre_seed4", "pre", "pre", "4", "gaussian", "per_layer"}));
  EXPECT_EQ(first_cells(2, 6), (std::vector<std::string>{"pre_tied_seed3", "pre_tied", "pre", "3",
                                                         "gaussian", "tied"}));
  EXPECT_EQ(first_cells(4, 6),
            (std::vector<std::string>{"post", "post", "post", "5", "gaussian", "per_layer"}));
  // Pre has a radius exponent; post (no radial motion) an empty one.
  EXPECT_FALSE(t.cell(0, "radius_exponent").empty());
  EXPECT_TRUE(t.cell(4, "radius_exponent").empty());
  EXPECT_EQ(t.cell(4, "radius_fit_points"), "0");
  // Different seeds, different runs.
  EXPECT_NE(t.cell(0, "final_mean_radius"), t.cell(1, "final_mean_radius"));
  std::filesystem::remove_all(dir);
}

TEST(PerLayerCli, SeedListedTwiceIsRejected) {
  const std::filesystem::path dir = fresh_dir("study_seed_twice");
  const std::string file = (dir / "s.toml").string();
  write_file_atomic(file, "kind = \"particles\"\nruns = [\"post\"]\n[defaults]\nseeds = [1, 1]\n");
  expect_usage_error("run " + file + " --out " + (dir / "out").string(),
                     file + ":4: key 'seeds' lists 1 twice");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace normlab::particles
