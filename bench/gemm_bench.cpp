// normlab's matrix products (src/core/kernels/gemm.cpp) against OpenBLAS's cblas_sgemm on the
// products of a training step of the small preset (`normlab bench train --preset small`: D =
// 128, 4 heads, MLP 512, V = 64, batch 32 × 64 = 2048 rows, row shards of 256), on those of the
// Chomsky-hierarchy encoder (experiments/chomsky_hierarchy.toml: D = 64, MLP 256), on those of
// MQAR's readout over V = 8192 (experiments/mqar.toml at L = 512; its weight gradient also as
// x^T dy, the same sums transposed), and on a 2048³ product (the SGEMM peak of `normlab bench
// train`). Last, MQAR's readout over 4096 rows, its three products (logits, dx, dweight) over
// all rows at once and by blocks of rows, each block's logits used while in cache: the same
// chains, so the same bits (checked here), and the gain a readout fused by row blocks can have.
//
//   normlab_gemm_bench
//
// Prints, per shape, the best of 15 rounds in µs and GFLOP/s for both, and their ratio. One
// thread. OpenBLAS's kernel is whatever it picks for this CPU (OPENBLAS_CORETYPE chooses
// another); normlab's is the tile built for this binary. Values are random; nothing is checked
// (the kernel tests do that).
#include <cblas.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "core/kernels/gemm.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// The best time of one call of f over 15 rounds of `calls` calls, in µs.
template <typename F>
double best_microseconds(int calls, F&& f) {
  double best = 1e30;
  for (int round = 0; round < 15; ++round) {
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < calls; ++i) f();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, seconds / calls * 1e6);
  }
  return best;
}

bool same_bits(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

enum Step { kSmall, kChomsky, kMqar, kNone };  // the training step a product belongs to

// C (M, N) = op(A) (M, K) op(B) (K, N), as a linear layer's three products use them.
struct ProductShape {
  bool trans_a, trans_b;
  int M, N, K;
  const char* name;
  Step step;
};

// MQAR's readout, R = 4096 rows (x (R, D), U (V, D), V = 8192, D = 64): logits = x U^T,
// dx = logits U, dU = logits^T x (the logits standing in for their gradient), over all rows,
// then row block by row block, dU's chains continued from block to block.
void readout_by_row_blocks() {
  const int R = 4096, V = 8192, D = 64;
  std::mt19937 rng(2);
  std::normal_distribution<float> normal;
  std::vector<float> x(size_t(R) * D), U(size_t(V) * D), logits(size_t(R) * V);
  std::vector<float> dx(size_t(R) * D), dU(size_t(V) * D);
  for (float& e : x) e = normal(rng);
  for (float& e : U) e = normal(rng);
  const double flops = 3 * 2.0 * R * V * D;
  const double whole = best_microseconds(1, [&] {
    normlab::gemm<float>(false, true, R, V, D, x.data(), D, U.data(), D, false, logits.data(), V);
    normlab::gemm<float>(false, false, R, D, V, logits.data(), V, U.data(), D, false, dx.data(), D);
    normlab::gemm<float>(true, false, V, D, R, logits.data(), V, x.data(), D, false, dU.data(), D);
  });
  std::printf("%-18s %10.1f %10.1f\n", "readout, all rows", whole, flops / whole / 1e3);
  const std::vector<float> dx_whole = dx, dU_whole = dU;
  for (int rows : {64, 128, 256}) {
    const double blocks = best_microseconds(1, [&] {
      for (int n0 = 0; n0 < R; n0 += rows) {
        float* l = logits.data();  // (rows, V), the block's
        normlab::gemm<float>(false, true, rows, V, D, x.data() + n0 * D, D, U.data(), D, false, l,
                             V);
        normlab::gemm<float>(false, false, rows, D, V, l, V, U.data(), D, false, dx.data() + n0 * D,
                             D);
        normlab::gemm<float>(true, false, V, D, rows, l, V, x.data() + n0 * D, D, n0 > 0, dU.data(),
                             D);
      }
    });
    const bool same = std::equal(dx.begin(), dx.end(), dx_whole.begin(), same_bits) &&
                      std::equal(dU.begin(), dU.end(), dU_whole.begin(), same_bits);
    std::printf("readout, blocks %-3d %10.1f %10.1f %7.2f  %s\n", rows, blocks,
                flops / blocks / 1e3, whole / blocks, same ? "same bits" : "DIFFERENT BITS");
  }
}

}  // namespace

int main() {
  openblas_set_num_threads(1);
  // One row shard (256 rows) of the forward (x W^T) and of dx (dy W), and one lane's weight
  // gradient (dy^T x over 1024 rows), for the attention's q|k|v and output projections and the
  // MLP's two layers; then the SGEMM peak's square.
  const ProductShape shapes[] = {
      {false, true, 256, 384, 128, "qkv forward", kSmall},
      {false, false, 256, 128, 384, "qkv dx", kSmall},
      {true, false, 384, 128, 1024, "qkv dweight", kSmall},
      {false, true, 256, 128, 128, "out forward", kSmall},
      {false, true, 256, 512, 128, "mlp up forward", kSmall},
      {false, false, 256, 128, 512, "mlp up dx", kSmall},
      {true, false, 512, 128, 1024, "mlp up dweight", kSmall},
      {false, true, 256, 128, 512, "mlp down forward", kSmall},
      {false, false, 256, 512, 128, "mlp down dx", kSmall},
      {true, false, 128, 512, 1024, "mlp down dweight", kSmall},
      {false, true, 256, 64, 128, "unembed forward", kSmall},
      // The Chomsky-hierarchy encoder's (experiments/chomsky_hierarchy.toml: D = 64, MLP 256).
      {false, true, 256, 192, 64, "D64 qkv forward", kChomsky},
      {false, false, 256, 64, 192, "D64 qkv dx", kChomsky},
      {true, false, 192, 64, 1024, "D64 qkv dweight", kChomsky},
      {false, true, 256, 256, 64, "D64 up forward", kChomsky},
      {false, false, 256, 64, 256, "D64 up dx", kChomsky},
      {true, false, 256, 64, 1024, "D64 up dweight", kChomsky},
      {false, true, 256, 64, 256, "D64 down forward", kChomsky},
      {false, false, 256, 256, 64, "D64 down dx", kChomsky},
      {true, false, 64, 256, 1024, "D64 down dweight", kChomsky},
      // MQAR's readout at L = 512 (experiments/mqar.toml: D = 64, V = 8192, batch 128 × 64
      // queries = 8192 rows): one row shard of the logits and of dx, one lane's weight gradient.
      {false, true, 256, 8192, 64, "V8192 forward", kMqar},
      {false, false, 256, 64, 8192, "V8192 dx", kMqar},
      {true, false, 8192, 64, 4096, "V8192 dweight", kMqar},
      {true, false, 64, 8192, 4096, "V8192 dweight^T", kNone},  // (x^T dy), not in the sum
      {false, false, 2048, 2048, 2048, "2048^3", kNone},
  };
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::printf("%-18s %10s %10s %10s %10s %7s\n", "product", "normlab us", "GFLOP/s", "OpenBLAS us",
              "GFLOP/s", "ratio");
  double total_normlab[3] = {}, total_blas[3] = {};  // by step: small, Chomsky, MQAR
  for (const ProductShape& s : shapes) {
    const int lda = s.trans_a ? s.M : s.K, ldb = s.trans_b ? s.K : s.N;
    std::vector<float> A(size_t(s.trans_a ? s.K : s.M) * lda);
    std::vector<float> B(size_t(s.trans_b ? s.N : s.K) * ldb), C(size_t(s.M) * s.N);
    for (float& e : A) e = normal(rng);
    for (float& e : B) e = normal(rng);
    const double flops = 2.0 * s.M * s.N * s.K;
    const int calls = std::max(1, int(2e8 / flops));
    const double ours = best_microseconds(calls, [&] {
      normlab::gemm<float>(s.trans_a, s.trans_b, s.M, s.N, s.K, A.data(), lda, B.data(), ldb, false,
                           C.data(), s.N);
    });
    const double blas = best_microseconds(calls, [&] {
      cblas_sgemm(CblasRowMajor, s.trans_a ? CblasTrans : CblasNoTrans,
                  s.trans_b ? CblasTrans : CblasNoTrans, s.M, s.N, s.K, 1.0f, A.data(), lda,
                  B.data(), ldb, 0.0f, C.data(), s.N);
    });
    if (s.step != kNone) total_normlab[s.step] += ours, total_blas[s.step] += blas;
    std::printf("%-18s %10.1f %10.1f %10.1f %10.1f %7.2f\n", s.name, ours, flops / ours / 1e3, blas,
                flops / blas / 1e3, blas / ours);
  }
  const char* sums[] = {"step shapes, sum", "D64 shapes, sum", "V8192 shapes, sum"};
  for (int step : {kSmall, kChomsky, kMqar}) {
    std::printf("%-18s %10.1f %10s %10.1f %10s %7.2f\n", sums[step], total_normlab[step], "",
                total_blas[step], "", total_blas[step] / total_normlab[step]);
  }
  readout_by_row_blocks();
  std::printf("normlab: %s; OpenBLAS core: %s\n", normlab::gemm_kernel_description().c_str(),
              openblas_get_corename());
  return 0;
}
