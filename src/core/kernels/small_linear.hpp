// Linear layers too narrow for OpenBLAS: inputs K ≤ 32 and outputs N ≤ 64 features (the
// minimal model of the post-norm paper has K = N = 15). OpenBLAS spends most of such a product
// packing its operands; these kernels transpose or pad only the weight and multiply four rows
// at a time in registers (block16.hpp). Same contracts as linear_forward/linear_backward
// (gemm.hpp), and the same fixed row shards, so results do not depend on the thread count.
#pragma once

#include <cstdint>

namespace normlab {

// Whether the small kernels handle a layer with K inputs and N outputs.
inline bool is_small_linear(int64_t K, int64_t N) {
  return K <= 32 && N <= 64;
}

// Y (M, N) = X (M, K) W^T, W (N, K).
template <typename T>
void small_linear_forward(const T* X, const T* W, T* Y, int64_t M, int64_t K, int64_t N,
                          int64_t ldx, int64_t ldy);

// dX (M, K) += dY (M, N) W (if dX is not null);  dW (N, K) += dY^T X.
template <typename T>
void small_linear_backward(const T* X, const T* W, const T* dY, T* dX, T* dW, int64_t M, int64_t K,
                           int64_t N, int64_t ldx, int64_t ldy);

}  // namespace normlab
