// The machine report and the slow-path notice (normlab/core/machine.hpp): a command that calls
// OpenBLAS says once, in one line on stderr, when OpenBLAS runs kernels older than the CPU
// (OPENBLAS_CORETYPE=Prescott stands in for a CPU it does not know), and nothing when its
// kernels fit; training and the particle dynamics' products, which call no OpenBLAS, say
// nothing either way.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "normlab/core/machine.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::run_normlab;

// A small particle run with one head of weights tied over depth: integrated in the Schur basis
// of V, which LAPACK computes.
const std::vector<std::string> kParticles = {"particles", "--scheme",    "pre", "--init", "random",
                                             "--n",       "8",           "--d", "4",      "--qkv",
                                             "kaiming",   "--qkv-depth", "tied"};

TEST(SlowPathNote, OneLineWhenOpenBlasRunsOlderKernelsThanTheCpu) {
  const auto r = run_normlab(kParticles, {"OPENBLAS_CORETYPE=Prescott"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  if (!machine_info().avx2_fma) {
    EXPECT_EQ(r.err, "") << "Prescott's kernels are this CPU's best: no note";
    return;
  }
  EXPECT_EQ(r.err.rfind("normlab: OPENBLAS_CORETYPE=Prescott makes OpenBLAS run its Prescott "
                        "kernels on this CPU (",
                        0),
            0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(SlowPathNote, NothingWhenOpenBlasKernelsFitTheCpu) {
  if (!machine_info().avx2_fma) GTEST_SKIP() << "this CPU has no AVX2: Haswell kernels cannot run";
  const auto r = run_normlab(kParticles, {"OPENBLAS_CORETYPE=Haswell"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.err, "");
}

TEST(SlowPathNote, ParticlesWithoutTheSchurFormSayNothingUnderAnyKernels) {
  for (const char* qkv : {"identity", "kaiming"}) {  // kaiming: per-layer weights, no Schur form
    SCOPED_TRACE(qkv);
    const auto r = run_normlab(
        {"particles", "--scheme", "pre", "--init", "random", "--n", "8", "--d", "4", "--qkv", qkv},
        {"OPENBLAS_CORETYPE=Prescott"});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_EQ(r.err, "");
  }
}

TEST(SlowPathNote, TrainingSaysNothingUnderAnyKernels) {
  testing::TempDir dir;
  const auto init = run_normlab({"init", "--scheme", "pre", "--width", "64", "--vocab", "20",
                                 "--out", (dir.path() / "c").string()});
  ASSERT_EQ(init.exit_code, 0) << init.describe();
  const auto r = run_normlab({"train-steps", "--checkpoint", (dir.path() / "c").string(), "--out",
                              (dir.path() / "t").string(), "--steps", "2"},
                             {"OPENBLAS_CORETYPE=Prescott"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace normlab
