// Where the two-stream schemes (resiDual, SiameseNorm; docs/schemes.md, "Two streams") write
// the norms of their streams, in training (kept for backward) and in inference (reused).
//
// Letters: N rows, D width.
#pragma once

namespace normlab {

// A null pointer where the scheme's TwoStreamRule does not need a buffer.
template <typename T>
struct TwoStreamBuffers {
  T* xhat = nullptr;                       // (N, D) N_x(x)
  T *x_mean = nullptr, *x_rstd = nullptr;  // (N)
  T* yhat = nullptr;                       // (N, D) N_y(y)
  T *y_mean = nullptr, *y_rstd = nullptr;  // (N)
  T* v = nullptr;                          // (N, D) x̂ + N_y(y), the branch input
};

// What a sublayer reads: x̂, the residual input of its add, and v, the input of its branch.
template <typename T>
struct TwoStreamInput {
  const T* xhat = nullptr;
  const T* v = nullptr;
};

}  // namespace normlab
