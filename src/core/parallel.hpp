// Threads. Work is cut into tasks whose boundaries never depend on the thread count, so every
// number is computed by the same operations in the same order with 1 or 2 threads
// (docs/design.md principle 8: bit-identical results).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "core/flush_subnormals.hpp"
#include "normlab/core/threads.hpp"

namespace normlab {

// Rows per task for row-wise kernels and row-sharded matrix products. Fixed: changing it
// changes the bits of results (reduction order), never their meaning.
constexpr int64_t kRowShard = 256;

inline int64_t shard_count(int64_t rows, int64_t shard = kRowShard) {
  return (rows + shard - 1) / shard;
}

// GCC's `noipa`; clang (the fuzzers' build, scripts/test.sh) has no such attribute, and
// `noinline` is its nearest.
#if defined(__clang__)
#define NORMLAB_NO_IPA gnu::noinline
#else
#define NORMLAB_NO_IPA gnu::noipa
#endif

// Runs fn(i) for every i in [begin, end), subnormals flushed to zero (flush_subnormals.hpp).
// The one compiled copy of a task body: `noipa` keeps it out of its callers and unspecialized,
// so the serial call and each thread's call in parallel_for run the same instructions,
// whatever the compiler would make of a second copy.
template <typename F>
[[NORMLAB_NO_IPA]] void run_tasks(F& fn, int64_t begin, int64_t end) {
  const FlushSubnormals flush;
  for (int64_t i = begin; i < end; ++i) fn(i);
}

// Runs fn(i) for every i in [0, n), split statically across threads: thread t of T takes
// the contiguous range of schedule(static), n/T tasks and one more for the first n mod T.
// With one thread or one task it calls run_tasks directly: an OpenMP region of one thread
// still costs libgomp's team set-up and a futex wake, which on small models is several
// percent of a training step (docs/performance-log.md, "`parallel_for` without a one-thread
// OpenMP region").
template <typename F>
void parallel_for(int64_t n, F&& fn) {
  const int threads = num_threads();
  if (threads <= 1 || n <= 1) {
    run_tasks(fn, 0, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    const int64_t base = n / team, extra = n % team;
    const int64_t begin = t * base + std::min(t, extra);
    run_tasks(fn, begin, begin + base + (t < extra ? 1 : 0));
  }
}

// Runs fn(s, n0, n1) for every row shard s, [n0, n1) = [s·kRowShard, min(rows, (s+1)·kRowShard))
// of [0, rows), in parallel: the one way a row-wise kernel splits its rows. s indexes the
// shard's partial sums where a kernel reduces over rows (summed afterwards in shard order).
template <typename F>
void for_row_shards(int64_t rows, F&& fn) {
  parallel_for(shard_count(rows), [&](int64_t s) {
    const int64_t n0 = s * kRowShard;
    fn(s, n0, std::min(rows, n0 + kRowShard));
  });
}

// Sets p[0, n) to zero, in fixed blocks in parallel.
template <typename T>
void parallel_zero(T* p, int64_t n) {
  constexpr int64_t kBlock = 16384;
  parallel_for(shard_count(n, kBlock), [&](int64_t b) {
    std::fill(p + b * kBlock, p + std::min(n, (b + 1) * kBlock), T(0));
  });
}

}  // namespace normlab
