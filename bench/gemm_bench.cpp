// normlab's matrix products (src/core/kernels/gemm.cpp) against OpenBLAS's cblas_sgemm on the
// products of a training step of the small preset (`normlab bench train --preset small`: D =
// 128, 4 heads, MLP 512, V = 64, batch 32 × 64 = 2048 rows, row shards of 256), and on a 2048³
// product (the SGEMM peak of `normlab bench train`).
//
//   normlab_gemm_bench
//
// Prints, per shape, the best of 15 rounds in µs and GFLOP/s for both, and their ratio. One
// thread. OpenBLAS's kernel is whatever it picks for this CPU (OPENBLAS_CORETYPE chooses
// another); normlab's is the tile built for this binary. Values are random; nothing is checked
// (the kernel tests do that).
#include <cblas.h>

#include <algorithm>
#include <chrono>
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

// C (M, N) = op(A) (M, K) op(B) (K, N), as a linear layer's three products use them.
struct ProductShape {
  bool trans_a, trans_b;
  int M, N, K;
  const char* name;
};

}  // namespace

int main() {
  openblas_set_num_threads(1);
  // One row shard (256 rows) of the forward (x W^T) and of dx (dy W), and one lane's weight
  // gradient (dy^T x over 1024 rows), for the attention's q|k|v and output projections and the
  // MLP's two layers; then the SGEMM peak's square.
  const ProductShape shapes[] = {
      {false, true, 256, 384, 128, "qkv forward"},
      {false, false, 256, 128, 384, "qkv dx"},
      {true, false, 384, 128, 1024, "qkv dweight"},
      {false, true, 256, 128, 128, "out forward"},
      {false, true, 256, 512, 128, "mlp up forward"},
      {false, false, 256, 128, 512, "mlp up dx"},
      {true, false, 512, 128, 1024, "mlp up dweight"},
      {false, true, 256, 128, 512, "mlp down forward"},
      {false, false, 256, 512, 128, "mlp down dx"},
      {true, false, 128, 512, 1024, "mlp down dweight"},
      {false, true, 256, 64, 128, "unembed forward"},
      {false, false, 2048, 2048, 2048, "2048^3"},
  };
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::printf("%-18s %10s %10s %10s %10s %7s\n", "product", "normlab us", "GFLOP/s", "OpenBLAS us",
              "GFLOP/s", "ratio");
  double total_normlab = 0, total_blas = 0;
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
    if (s.M < 2048) total_normlab += ours, total_blas += blas;
    std::printf("%-18s %10.1f %10.1f %10.1f %10.1f %7.2f\n", s.name, ours, flops / ours / 1e3, blas,
                flops / blas / 1e3, blas / ours);
  }
  std::printf("%-18s %10.1f %10s %10.1f %10s %7.2f\n", "step shapes, sum", total_normlab, "",
              total_blas, "", total_blas / total_normlab);
  std::printf("normlab: %s; OpenBLAS core: %s\n", normlab::gemm_kernel_description().c_str(),
              openblas_get_corename());
  return 0;
}
