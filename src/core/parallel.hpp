// Threads. Work is cut into tasks whose boundaries never depend on the thread count, so every
// number is computed by the same operations in the same order with 1 or 2 threads
// (DESIGN.md principle 8: bit-identical results).
#pragma once

#include <cstdint>

namespace normlab {

// Rows per task for row-wise kernels and row-sharded matrix products. Fixed: changing it
// changes the bits of results (reduction order), never their meaning.
constexpr int64_t kRowShard = 256;

void set_num_threads(int n);
int num_threads();

inline int64_t shard_count(int64_t rows, int64_t shard = kRowShard) {
  return (rows + shard - 1) / shard;
}

// Runs fn(i) for every i in [0, n), split statically across threads.
template <typename F>
void parallel_for(int64_t n, F&& fn) {
  const int threads = num_threads();
  if (threads == 1 || n <= 1) {  // no OpenMP region at all: its setup costs microseconds
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

}  // namespace normlab
