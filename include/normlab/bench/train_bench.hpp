// Training-throughput benchmark: timed steps of forward, cross-entropy, backward and AdamW,
// and, where a fraction of the peak is wanted, this CPU's single-core SGEMM peak measured in
// the same run: the faster of OpenBLAS's product (whichever kernels it picked for this CPU) and
// normlab's own.
#pragma once

#include <cstdint>

#include "normlab/bench/bench_presets.hpp"

namespace normlab {

struct TrainBenchResult {
  int64_t steps = 0;
  double seconds = 0;
  double steps_per_s = 0;
  // Process CPU time of the timed steps (all threads). With one thread it is the wall time
  // minus the time the process waited for the CPU, a steadier figure on a shared machine.
  double cpu_seconds = 0;
  double cpu_seconds_per_step = 0;
  double tokens_per_s = 0;
  double flops_per_step = 0;
  double gflops = 0;  // model GFLOP/s (normlab/bench/flops.hpp)
  // Set by add_sgemm_peak (0 until then).
  double openblas_sgemm_gflops = 0;  // one thread, n³ product, best of 3
  double normlab_sgemm_gflops = 0;   // normlab's gemm<float>, the same product
  double sgemm_peak_gflops = 0;      // the larger of the two
  double fraction_of_peak = 0;       // gflops / sgemm_peak_gflops
};

// Runs `warmup` untimed steps, then timed steps until both `min_steps` and `min_seconds`
// are reached. Without a task, batches are random tokens with next-token targets at every
// position (8 batches generated up front, cycled). With a task, the model takes the task's
// vocabulary and every step generates a fresh batch of task length `task_len` inside the
// timed loop, as training does.
class Task;
TrainBenchResult run_train_bench(const BenchPreset& preset, int threads, int64_t warmup,
                                 int64_t min_steps, double min_seconds, const Task* task = nullptr,
                                 int64_t task_len = 0);

// GFLOP/s of a single-threaded n×n×n float product, best of `repeats`: by OpenBLAS's
// cblas_sgemm, or by normlab's gemm<float>.
double measure_sgemm_peak(bool openblas, int n = 2048, int repeats = 3);

// Measures the single-core SGEMM peak (both products at n³, a second or two at n = 2048) and
// sets r's peak fields and its fraction of the peak.
void add_sgemm_peak(TrainBenchResult& r, int n = 2048);

}  // namespace normlab
