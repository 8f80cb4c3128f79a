// Threads. Work is cut into tasks whose boundaries never depend on the thread count, so every
// number is computed by the same operations in the same order with 1 or 2 threads
// (docs/design.md principle 8: bit-identical results).
#pragma once

#include <algorithm>
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
// The task body is compiled once, inside the OpenMP loop, which also runs with one thread:
// with a second, serial copy the compiler may contract multiply-adds differently in the two
// copies (-ffp-contract=fast), and 1 and 2 threads would no longer give the same bits.
template <typename F>
void parallel_for(int64_t n, F&& fn) {
  const int threads = num_threads();
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && n > 1)
  for (int64_t i = 0; i < n; ++i) fn(i);
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
