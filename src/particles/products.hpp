// The two structured products of the particle dynamics, on normlab's own matrix products
// (core/kernels/gemm.hpp) with only the blocks their structure needs. Each value is the chain
// gemm gives the full product, so the bits are those of the full product. Internal to
// src/particles.
#pragma once

namespace normlab::particles {

// G (n, n) = X Xᵀ for X (n, d) row-major: the row blocks' columns on and right of the
// diagonal, then mirrored below it. Entry (k, j) mirrors (j, k), the chain of the same
// products with their factors swapped: the same bits as the full product's.
void gram(const double* x, int n, int d, double* g);

// U (n, d) = X Tᵀ for X (n, d) and T (d, d) upper triangular, row-major. Column block
// [i0, i0 + b) of U sums over k ≥ i0 only: a term k < i0 is X·0 = ±0, which leaves a chain's
// value as it is, so the bits are those of the full product X Tᵀ.
void times_upper_transposed(const double* x, const double* t, int n, int d, double* u);

}  // namespace normlab::particles
