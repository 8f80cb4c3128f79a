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
void linear_forward(const T* X, const T* W, T* Y, int64_t M, int64_t K, int64_t N, int64_t ldx,
                    int64_t ldy) {
  require_contract(M >= 0 && K >= 1 && N >= 1 && ldx >= K && ldy >= N, "linear_forward",
                   "M >= 0, K >= 1, N >= 1, ldx >= K, ldy >= N");
  const int64_t y_count = M > 0 ? (M - 1) * ldy + N : 0;
  require_contract(!ranges_overlap<T>(Y, y_count, X, M > 0 ? (M - 1) * ldx + K : 0) &&
                       !ranges_overlap<T>(Y, y_count, W, N * K),
                   "linear_forward", "Y may not alias X or W");
  if (is_small_linear(K, N)) return small_linear_forward(X, W, Y, M, K, N, ldx, ldy);
  gemm_sharded<T>(false, true, M, N, K, T(1), X, ldx, W, K, T(0), Y, ldy);
}

template <typename T>
void linear_backward(const T* X, const T* W, const T* dY, T* dX, T* dW, int64_t M, int64_t K,
                     int64_t N, int64_t ldx, int64_t ldy) {
  if (is_small_linear(K, N)) return small_linear_backward(X, W, dY, dX, dW, M, K, N, ldx, ldy);
  if (dX != nullptr) gemm_sharded<T>(false, false, M, K, N, T(1), dY, ldy, W, K, T(1), dX, ldx);
  // dW (N, K) = dY^T (N, M) X (M, K): sharded over the N rows of dW, each reduces over all M.
  gemm_sharded<T>(true, false, N, K, M, T(1), dY, ldy, X, ldx, T(1), dW, K);
}

template void gemm_sharded<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*,
                                  int64_t, const float*, int64_t, float, float*, int64_t);
template void gemm_sharded<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*,
                                   int64_t, const double*, int64_t, double, double*, int64_t);
template void linear_forward<float>(const float*, const float*, float*, int64_t, int64_t, int64_t,
                                    int64_t, int64_t);
template void linear_forward<double>(const double*, const double*, double*, int64_t, int64_t,
                                     int64_t, int64_t, int64_t);
template void linear_backward<float>(const float*, const float*, const float*, float*, float*,
                                     int64_t, int64_t, int64_t, int64_t, int64_t);
template void linear_backward<double>(const double*, const double*, const double*, double*, double*,
                                      int64_t, int64_t, int64_t, int64_t, int64_t);

}  // namespace normlab
