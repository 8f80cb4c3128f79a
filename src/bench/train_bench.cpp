#include "normlab/bench/train_bench.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

#include "core/kernels/gemm.hpp"
#include "core/parallel.hpp"
#include "normlab/base/batch.hpp"
#include "normlab/bench/flops.hpp"
#include "normlab/model/model.hpp"
#include "normlab/optim/adamw.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/train_step.hpp"

namespace normlab {

namespace {

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

double measure_sgemm_peak(bool openblas, int n, int repeats) {
  ensure_blas_single_threaded();
  std::vector<float> a(static_cast<size_t>(n) * n), b(a.size()), c(a.size());
  Rng rng(1);
  for (float& x : a) x = static_cast<float>(rng.normal());
  for (float& x : b) x = static_cast<float>(rng.normal());
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    if (openblas) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(),
                  n, 0.0f, c.data(), n);
    } else {
      gemm<float>(false, false, n, n, n, a.data(), n, b.data(), n, false, c.data(), n);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 2.0 * n * n * static_cast<double>(n) / s / 1e9);
  }
  return best;
}

TrainBenchResult run_train_bench(const BenchPreset& preset, int threads, int64_t warmup,
                                 int64_t min_steps, double min_seconds, const Task* task,
                                 int64_t task_len) {
  set_num_threads(threads);
  ModelConfig config = preset.model;
  if (task != nullptr) config.vocab = task->vocab();
  Model<float> model(config);
  model.init(0);
  AdamW optimizer(model.layout(), AdamWConfig{}, model.scheme().weight_decay);
  Rng rng(1);
  std::vector<Batch> batches;
  for (int i = 0; task == nullptr && i < 8; ++i) {
    batches.push_back(random_next_token_batch(preset.model.vocab, preset.batch, preset.len, rng));
  }
  std::vector<float> dlogits;
  int64_t step = 0;
  Batch fresh;  // a task's batch of this step; random-token batches are reused, not copied
  auto next_batch = [&](int64_t s) -> const Batch& {
    if (task == nullptr) return batches[s % batches.size()];
    fresh = task->make_batch(task_len, preset.batch, rng);
    return fresh;
  };
  for (; step < warmup; ++step) train_step(model, optimizer, next_batch(step), 1e-3, dlogits);
  TrainBenchResult r;
  const double cpu0 = process_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (r.steps < min_steps || elapsed < min_seconds) {
    train_step(model, optimizer, next_batch(step), 1e-3, dlogits);
    ++step;
    ++r.steps;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  r.seconds = elapsed;
  r.steps_per_s = r.steps / elapsed;
  r.cpu_seconds = process_cpu_seconds() - cpu0;
  r.cpu_seconds_per_step = r.cpu_seconds / r.steps;
  const int64_t len = task != nullptr ? task->sequence_length(task_len) : preset.len;
  r.tokens_per_s = r.steps_per_s * preset.batch * len;
  r.flops_per_step = train_step_flops(config, preset.batch, len, model.layout().total());
  r.gflops = r.steps_per_s * r.flops_per_step / 1e9;
  return r;
}

void add_sgemm_peak(TrainBenchResult& r, int n) {
  r.openblas_sgemm_gflops = measure_sgemm_peak(true, n);
  r.normlab_sgemm_gflops = measure_sgemm_peak(false, n);
  r.sgemm_peak_gflops = std::max(r.openblas_sgemm_gflops, r.normlab_sgemm_gflops);
  r.fraction_of_peak = r.gflops / r.sgemm_peak_gflops;
}

}  // namespace normlab
