// Linear layers too narrow for OpenBLAS: inputs K ≤ 32 and outputs N ≤ 64 features (the
// minimal model of the post-norm paper has K = N = 15). OpenBLAS spends most of such a product
// packing its operands; these kernels transpose or pad only the weight and multiply four rows
// at a time in registers (block16.hpp). Same contracts as linear_forward/linear_backward
// (gemm.hpp), and the same fixed row shards, so results do not depend on the thread count.
#pragma once

#include <cstdint>

#include "core/kernels/gemm.hpp"

namespace normlab {

// Whether the small kernels handle a layer with C inputs and OC outputs.
inline bool is_small_linear(int64_t C, int64_t OC) {
  return C <= 32 && OC <= 64;
}

// x is (R, C), weight is (OC, C), y is (R, OC): y = x weight^T.
template <typename T>
void small_linear_forward(const T* x, const T* weight, T* y, const LinearShape& shape);

// dx (R, C) += dy (R, OC) weight (if dx is not null);  dweight (OC, C) += dy^T x.
template <typename T>
void small_linear_backward(const T* x, const T* weight, const T* dy, T* dx, T* dweight,
                           const LinearShape& shape);

}  // namespace normlab
