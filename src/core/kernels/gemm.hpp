// Matrix products, row-major, on normlab's own register tiles (gemm_tile.hpp).
//
// C (M, N) = op(A) op(B), or C += op(A) op(B), op(X) = X or X^T. Every value of C is one chain
// of fused multiply-adds over k in ascending order, starting from C's value (accumulate) or
// from +0: the bits depend on the operands only, not on the CPU's vector width, the tile or
// cache blocking, nor the thread count (docs/design.md principle 8). Sharded variants cut C
// into fixed blocks of rows (kRowShard) and run one product per block in parallel, all on
// op(B) packed once.
#pragma once

#include <cstdint>
#include <string>

namespace normlab {

// OpenBLAS, which normlab calls only through LAPACK (the probes' eigen-solvers, the particle
// dynamics' Schur form), runs single-threaded in normlab: its own threading blocks a product
// differently and changes the bits of the result. Code that calls cblas_* or LAPACK calls this once
// before.
void ensure_blas_single_threaded();

// op(A) is (M, K), op(B) is (K, N), C is (M, N); lda, ldb, ldc are the distances between rows
// of A, B and C as stored.
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda,
          const T* B, int64_t ldb, bool accumulate, T* C, int64_t ldc);

// As gemm, with the rows of C split into shards of kRowShard run in parallel.
template <typename T>
void gemm_sharded(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const T* A,
                  int64_t lda, const T* B, int64_t ldb, bool accumulate, T* C, int64_t ldc);

// The products' register tiles as built for this binary, e.g. "AVX2+FMA, float tile 6x16,
// double tile 6x8": for `normlab --version` and `normlab bench`.
std::string gemm_kernel_description();

// The shape of a linear layer: R rows of C input features to OC output features. Rows of x
// and y may be strided (a column block of a wider buffer); 0 means dense (C and OC).
struct LinearShape {
  int64_t rows = 0;      // R
  int64_t in = 0;        // C
  int64_t out = 0;       // OC
  int64_t x_stride = 0;  // distance between rows of x (and dx); 0: C
  int64_t y_stride = 0;  // distance between rows of y (and dy); 0: OC
  int64_t ldx() const { return x_stride > 0 ? x_stride : in; }
  int64_t ldy() const { return y_stride > 0 ? y_stride : out; }
};

// How linear_backward writes dx: adds dy weight to it, or overwrites it with dy weight, the
// same bits as adding to +0 (each chain then starts from +0), without first zeroing dx.
enum class DxInto { add, assign };

// A linear layer without bias, the weight stored (out, in):
//   x is (R, C), weight is (OC, C), y is (R, OC)
//   forward:  y = x weight^T                      (overwrites y)
//   backward: dx += dy weight, or dx = dy weight  (dx (R, C); skipped when dx is null)
//             dweight += dy^T x                   (dweight (OC, C))
// The backward runs per row shard of kRowShard rows in parallel; dweight's sum over the rows
// is formed in a fixed number of lanes of shards, added in lane order (gemm.cpp).
template <typename T>
void linear_forward(const T* x, const T* weight, T* y, const LinearShape& shape);
template <typename T>
void linear_backward(const T* x, const T* weight, const T* dy, T* dx, T* dweight,
                     const LinearShape& shape, DxInto dx_into = DxInto::add);

// A linear layer's bias (OC), the shape's rows and outputs:
//   forward:  y (R, OC) += bias, row by row
//   backward: dbias += Σ_rows dy
// The backward sums each row shard of kRowShard rows in row order into a partial sum of its
// own, then adds the partial sums to dbias in shard order (as a norm's gain gradient,
// norm.cpp): one order of the additions for any thread count and vector width.
template <typename T>
void bias_forward(T* y, const T* bias, const LinearShape& shape);
template <typename T>
void bias_backward(const T* dy, T* dbias, const LinearShape& shape);

}  // namespace normlab
