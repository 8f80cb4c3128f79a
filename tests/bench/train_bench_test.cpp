// The training benchmark: timed steps, and the single-core SGEMM peak only where a fraction of
// it is wanted (the dry run's estimates time steps alone).
#include <gtest/gtest.h>

#include <algorithm>

#include "normlab/bench/bench_presets.hpp"
#include "normlab/bench/train_bench.hpp"

namespace normlab {
namespace {

TEST(TrainBench, MeasuresThePeakOnlyWhenAsked) {
  TrainBenchResult r = run_train_bench(bench_preset("minimal"), 1, 1, 3, 0.0);
  EXPECT_GE(r.steps, 3);
  EXPECT_GT(r.steps_per_s, 0.0);
  EXPECT_GT(r.gflops, 0.0);
  EXPECT_EQ(r.sgemm_peak_gflops, 0.0);  // not measured
  EXPECT_EQ(r.fraction_of_peak, 0.0);

  add_sgemm_peak(r, 64);  // a small product: the fields, not the figure, are checked
  EXPECT_GT(r.openblas_sgemm_gflops, 0.0);
  EXPECT_GT(r.normlab_sgemm_gflops, 0.0);
  EXPECT_EQ(r.sgemm_peak_gflops, std::max(r.openblas_sgemm_gflops, r.normlab_sgemm_gflops));
  EXPECT_EQ(r.fraction_of_peak, r.gflops / r.sgemm_peak_gflops);
}

}  // namespace
}  // namespace normlab
