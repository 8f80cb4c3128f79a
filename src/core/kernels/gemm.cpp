#include "core/kernels/gemm.hpp"

#include <cblas.h>

#include <algorithm>

#include "core/contracts.hpp"
#include "core/kernels/small_linear.hpp"
#include "core/parallel.hpp"

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

template <typename T>
void linear_backward(const T* x, const T* weight, const T* dy, T* dx, T* dweight,
                     const LinearShape& shape) {
  const int64_t R = shape.rows, C = shape.in, OC = shape.out;
  const int64_t ldx = shape.ldx(), ldy = shape.ldy();
  if (is_small_linear(C, OC)) return small_linear_backward(x, weight, dy, dx, dweight, shape);
  // dx (R, C) += dy (R, OC) weight (OC, C)
  if (dx != nullptr)
    gemm_sharded<T>(false, false, R, C, OC, T(1), dy, ldy, weight, C, T(1), dx, ldx);
  // dweight (OC, C) += dy^T (OC, R) x (R, C): sharded over the OC rows, each reduces over all R.
  gemm_sharded<T>(true, false, OC, C, R, T(1), dy, ldy, x, ldx, T(1), dweight, C);
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
