#include "particles/products.hpp"

#include <algorithm>
#include <cstddef>

#include "core/kernels/gemm.hpp"

namespace normlab::particles {

namespace {

// Rows (gram) or columns (times_upper_transposed) per block: small enough that the skipped
// triangle is most of the half the structure saves, large enough to fill the product's tiles.
constexpr int kBlock = 64;

}  // namespace

void gram(const double* x, int n, int d, double* g) {
  for (int j0 = 0; j0 < n; j0 += kBlock) {
    const int rows = std::min(kBlock, n - j0);
    // G[j0 : j0 + rows, j0 : n] = X[j0 : j0 + rows] X[j0 : n]ᵀ.
    gemm(false, true, rows, n - j0, d, x + static_cast<size_t>(j0) * d, d,
         x + static_cast<size_t>(j0) * d, d, false, g + static_cast<size_t>(j0) * n + j0, n);
  }
  for (int j = 1; j < n; ++j) {
    for (int k = 0; k < j; ++k)
      g[static_cast<size_t>(j) * n + k] = g[static_cast<size_t>(k) * n + j];
  }
}

void times_upper_transposed(const double* x, const double* t, int n, int d, double* u) {
  for (int i0 = 0; i0 < d; i0 += kBlock) {
    const int cols = std::min(kBlock, d - i0);
    // U[:, i0 : i0 + cols] = X[:, i0 : d] T[i0 : i0 + cols, i0 : d]ᵀ.
    gemm(false, true, n, cols, d - i0, x + i0, d, t + static_cast<size_t>(i0) * d + i0, d, false,
         u + i0, d);
  }
}

}  // namespace normlab::particles
