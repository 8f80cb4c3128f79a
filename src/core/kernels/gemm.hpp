// Matrix products on OpenBLAS, row-major.
//
// C (M, N) = alpha * op(A) op(B) + beta * C, op(X) = X or X^T. Sharded variants cut C into
// fixed blocks of rows (kRowShard) and run one product per block in parallel; the cut does not
// depend on the thread count, so results are identical with any number of threads.
#pragma once

#include <cstdint>

namespace normlab {

// OpenBLAS runs single-threaded in normlab (callers parallelize around it over fixed shards):
// its own threading blocks a product differently and changes the bits of the result. gemm()
// calls this itself; code that calls cblas_* directly calls it once before.
void ensure_blas_single_threaded();

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
          int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc);

// As gemm, with the rows of C split into shards of kRowShard run in parallel.
template <typename T>
void gemm_sharded(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
                  int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc);

// Linear layer, W stored (N, K) as (out, in):
//   forward:  Y (M, N) = X (M, K) W^T            (overwrites Y)
//   backward: dX (M, K) += dY (M, N) W            (if dX is not null)
//             dW (N, K) += dY^T X
template <typename T>
void linear_forward(const T* X, const T* W, T* Y, int64_t M, int64_t K, int64_t N, int64_t ldx,
                    int64_t ldy);
template <typename T>
void linear_backward(const T* X, const T* W, const T* dY, T* dX, T* dW, int64_t M, int64_t K,
                     int64_t N, int64_t ldx, int64_t ldy);

}  // namespace normlab
