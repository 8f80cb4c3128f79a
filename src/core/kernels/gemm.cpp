#include "core/kernels/gemm.hpp"

#include <cblas.h>

#include <algorithm>

#include "core/contracts.hpp"
#include "core/kernels/small_linear.hpp"
#include "core/parallel.hpp"
#include "core/scratch.hpp"

namespace normlab {

// OpenBLAS always runs single-threaded: we parallelize around it over fixed row shards. Its
// own threading (by default one thread per core, or OPENBLAS_NUM_THREADS) blocks a product
// differently and changes the bits of the result, so a program that never called
// set_num_threads() would give results that depend on the machine (docs/design.md principle 8).
// Done once, before the first product, whoever calls it.
void ensure_blas_single_threaded() {
  static const bool done = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)done;
}

template <>
void gemm<float>(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                 const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                 int64_t ldc) {
  if (M == 0 || N == 0) return;
  ensure_blas_single_threaded();
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <>
void gemm<double>(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha,
                  const double* A, int64_t lda, const double* B, int64_t ldb, double beta,
                  double* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  ensure_blas_single_threaded();
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <typename T>
void gemm_sharded(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
                  int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  for_row_shards(M, [&](int64_t, int64_t m0, int64_t m1) {
    const int64_t rows = m1 - m0;
    // Row m of op(A) starts at A + m*lda (no transpose) or at column m of A (transpose).
    const T* a = trans_a ? A + m0 : A + m0 * lda;
    gemm<T>(trans_a, trans_b, rows, N, K, alpha, a, lda, B, ldb, beta, C + m0 * ldc, ldc);
  });
}

template <typename T>
void linear_forward(const T* x, const T* weight, T* y, const LinearShape& shape) {
  const int64_t R = shape.rows, C = shape.in, OC = shape.out;
  const int64_t ldx = shape.ldx(), ldy = shape.ldy();
  require_contract(R >= 0 && C >= 1 && OC >= 1 && ldx >= C && ldy >= OC, "linear_forward",
                   "rows >= 0, in >= 1, out >= 1, x_stride >= in, y_stride >= out");
  const int64_t y_count = R > 0 ? (R - 1) * ldy + OC : 0;
  require_contract(!ranges_overlap<T>(y, y_count, x, R > 0 ? (R - 1) * ldx + C : 0) &&
                       !ranges_overlap<T>(y, y_count, weight, OC * C),
                   "linear_forward", "y may not alias x or weight");
  if (is_small_linear(C, OC)) return small_linear_forward(x, weight, y, shape);
  gemm_sharded<T>(false, true, R, OC, C, T(1), x, ldx, weight, C, T(0), y, ldy);
}

// The weight gradient of linear_backward is summed over its rows in kWeightLanes lanes, each a
// contiguous run of whole row shards (lane l: shards [l·S/lanes, (l+1)·S/lanes) of S), so that
// that many products can run side by side; lane 0 accumulates into dweight itself, each other
// lane into a partial sum of its own (OC, C), added to dweight at the end. Fewer lanes when
// their partials would pass kWeightPartialBytes. Both depend on the shape only, never on the
// thread count. Two lanes keep both cores of a 2-core machine busy; every further lane costs
// one-thread runs a partial sum written and re-read.
constexpr int64_t kWeightLanes = 2;
constexpr int64_t kWeightPartialBytes = int64_t(32) << 20;

template <typename T>
void linear_backward(const T* x, const T* weight, const T* dy, T* dx, T* dweight,
                     const LinearShape& shape) {
  const int64_t R = shape.rows, C = shape.in, OC = shape.out;
  const int64_t ldx = shape.ldx(), ldy = shape.ldy();
  if (is_small_linear(C, OC)) return small_linear_backward(x, weight, dy, dx, dweight, shape);
  const int64_t shards = shard_count(R);
  // dx (R, C) += dy (R, OC) weight (OC, C), row shard by row shard.
  const auto dx_rows = [&](int64_t n0, int64_t n1) {
    if (dx == nullptr) return;
    gemm<T>(false, false, n1 - n0, C, OC, T(1), dy + n0 * ldy, ldy, weight, C, T(1), dx + n0 * ldx,
            ldx);
  };
  // dweight (OC, C) += Σ_l dy_l^T (OC, R_l) x_l (R_l, C), l over the lanes' rows (above).
  // Each product packs only its lane's rows, so no operand is packed twice. (Sharding the
  // output rows of dweight instead leaves one task for OC ≤ 256 and repacks x for every task.)
  const int64_t size = OC * C;
  const int64_t affordable = kWeightPartialBytes / (size * int64_t(sizeof(T))) + 1;
  const int64_t lanes = std::clamp<int64_t>(affordable, 1, std::min(shards, kWeightLanes));
  T* partial =
      scratch<T>(ScratchUse::linear_weight_partial, (lanes - 1) * size);  // (lanes-1, OC, C)
  parallel_for(lanes, [&](int64_t lane) {
    const int64_t s0 = lane * shards / lanes, s1 = (lane + 1) * shards / lanes;
    const int64_t n0 = s0 * kRowShard, n1 = std::min(R, s1 * kRowShard);
    for (int64_t s = s0; s < s1; ++s) dx_rows(s * kRowShard, std::min(R, (s + 1) * kRowShard));
    gemm<T>(true, false, OC, C, n1 - n0, T(1), dy + n0 * ldy, ldy, x + n0 * ldx, ldx,
            lane == 0 ? T(1) : T(0), lane == 0 ? dweight : partial + (lane - 1) * size, C);
  });
  if (lanes == 1) return;
  // Elementwise, in fixed blocks: dweight += lane 1 + lane 2 + ... in lane order.
  constexpr int64_t kBlock = 4096;
  parallel_for(shard_count(size, kBlock), [&](int64_t b) {
    const int64_t e1 = std::min(size, (b + 1) * kBlock);
    for (int64_t l = 1; l < lanes; ++l) {
      const T* p = partial + (l - 1) * size;
      for (int64_t e = b * kBlock; e < e1; ++e) dweight[e] += p[e];
    }
  });
}

template void gemm_sharded<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*,
                                  int64_t, const float*, int64_t, float, float*, int64_t);
template void gemm_sharded<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*,
                                   int64_t, const double*, int64_t, double, double*, int64_t);
template void linear_forward<float>(const float*, const float*, float*, const LinearShape&);
template void linear_forward<double>(const double*, const double*, double*, const LinearShape&);
template void linear_backward<float>(const float*, const float*, const float*, float*, float*,
                                     const LinearShape&);
template void linear_backward<double>(const double*, const double*, const double*, double*, double*,
                                      const LinearShape&);

}  // namespace normlab
