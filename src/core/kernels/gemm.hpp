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
#include <functional>
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

// gradient(s, m0, m1, y): turns rows [m0, m1) of a layer's output, inside row shard s, into
// the loss's gradient on them, in place (y (m1 − m0, OC)). A shard's rows come in ranges in
// row order, one call each, all on one thread.
template <typename T>
using ShardGradient = std::function<void(int64_t s, int64_t n0, int64_t n1, T* y)>;

// A linear layer (and its bias, when bias is not null) whose output only a loss of each row
// alone reads (the readout and its cross-entropy), forward and backward row shard by row
// shard, each shard's output used while it is in cache; the (R, OC) output is never stored:
//   y = x weight^T (+ bias)       rows [m0, m1) of shard s, into a block of OC-wide rows
//   gradient(s, m0, m1, y)        y becomes dy
//   dx, dweight, dbias            as linear_backward and bias_backward give them from dy
// The bits of linear_forward, bias_forward, the gradient of each shard, bias_backward and
// linear_backward on the whole (R, OC) dy, for any thread count (the weight gradient's lanes
// and the bias's shard partials are theirs). shape.y_stride must be 0 or OC. Shards run side
// by side on several threads.
template <typename T>
void linear_by_shards(const T* x, const T* weight, const T* bias, T* dx, T* dweight, T* dbias,
                      const LinearShape& shape, DxInto dx_into, const ShardGradient<T>& gradient);

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
