// `normlab particles` and `normlab run` from the outside: bad input gives one clear message and
// exit code 2; good input prints what docs/particles.md promises.
#include <gtest/gtest.h>

#include <cmath>

#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "particles/test_util.hpp"

namespace normlab::particles {
namespace {

using testing::CliResult;
using testing::expect_usage_error;
using testing::fresh_dir;
using testing::run_cli;

// A small, valid run; `beta` and `dt` can be replaced.
std::string small(const std::string& beta = "2", const std::string& dt = "0.1") {
  return "particles --scheme post --init symmetric --n 8 --d 8 --beta " + beta + " --dt " + dt +
         " --t-end 0.5";
}

TEST(ParticlesCli, SymmetricNeedsDAtLeastN) {
  expect_usage_error(
      "particles --scheme post --init symmetric --n 16 --d 8",
      "--init symmetric needs d >= n (n orthonormal tokens in R^d), got n=16 and d=8");
}

TEST(ParticlesCli, BetaMustBePositive) {
  expect_usage_error(small("0"), "--beta must be a finite number > 0, got 0");
  expect_usage_error(small("-1.5"), "--beta must be a finite number > 0, got -1.5");
}

TEST(ParticlesCli, StepMustBePositive) {
  expect_usage_error(small("2", "-0.01"), "--dt (the step) must be > 0, got -0.01");
}

TEST(ParticlesCli, UnknownSchemeListsTheAllowedOnes) {
  expect_usage_error(
      "particles --scheme deepnorm --init random",
      "unknown scheme 'deepnorm'; allowed: post, pre, mix, peri, ngpt, sqrt_scaling");
}

TEST(ParticlesCli, NanOrWrongShapeInAFile) {
  const std::filesystem::path dir = fresh_dir("cli_files");
  const std::string init = (dir / "init.txt").string();
  write_file_atomic(init, "shape 3 2\n1 0\n0 nan\n1 1\n");
  expect_usage_error("particles --scheme post --init file --init-file " + init + " --n 3 --d 2",
                     init + ":3: value 2 is NaN");
  write_file_atomic(init, "shape 3 2\n1 0\n0 1\n1 1\n");
  expect_usage_error(
      "particles --scheme post --init file --init-file " + init + " --n 4 --d 2",
      init + ":1: wrong shape (3, 2) for the initial directions (n, d): expected (4, 2)");
  const std::string qkv = (dir / "qkv.txt").string();
  write_file_atomic(qkv, "shape 1 3 2 2\n1 0\n0 1\n1 0\n0 1\n1 0\n0 1 5\n");
  expect_usage_error(
      "particles --scheme post --init random --n 3 --d 2 --qkv file --qkv-file " + qkv,
      qkv + ":7: wrong shape: 3 values on this line, expected 2");
  std::filesystem::remove_all(dir);
}

TEST(ParticlesCli, SummaryPrintsTheInitialVelocity) {
  const CliResult r = run_cli(small() + " --summary");
  ASSERT_EQ(r.code, 0) << r.output;
  const size_t at = r.output.find("initial velocity: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const double v = std::stod(r.output.substr(at + 18));
  EXPECT_NEAR(v, 2.0 / (std::exp(2.0) + 7.0), 1e-9);
  EXPECT_NE(r.output.find("better fit: "), std::string::npos) << r.output;
}

TEST(ParticlesCli, CsvFileHasOneRowPerRecordingTime) {
  const std::filesystem::path dir = fresh_dir("cli_csv");
  const std::string csv = (dir / "out.csv").string();
  const CliResult r = run_cli(small() + " --record-every 0.1 --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.output;
  const CsvTable t = read_csv_table(csv);
  EXPECT_EQ(csv_row(t.columns),
            "t,mean_cos,min_cos,variance,mean_radius,mean_speed,dcos_dt,one_minus_mean_cos,"
            "mean_angle_from_start\n");
  EXPECT_EQ(t.rows.size(), 6u);  // t = 0, 0.1, ..., 0.5
  std::filesystem::remove_all(dir);
}

TEST(RunCli, UnknownKindListsTheAllowedOnes) {
  const std::filesystem::path dir = fresh_dir("run_kind");
  const std::string file = (dir / "x.toml").string();
  write_file_atomic(file, "kind = \"sweep\"\n");
  expect_usage_error("run " + file,
                     "key 'kind' in top level is 'sweep'; allowed: train, particles");
  std::filesystem::remove_all(dir);
}

TEST(RunCli, UnknownKeyIsRejectedWithItsLine) {
  const std::filesystem::path dir = fresh_dir("run_key");
  const std::string file = (dir / "x.toml").string();
  write_file_atomic(file,
                    "kind = \"particles\"\nruns = [\"post\"]\n[defaults]\nn = 8\nbetta = 3\n");
  expect_usage_error("run " + file, file + ":5: unknown key 'betta' in [defaults]");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace normlab::particles
