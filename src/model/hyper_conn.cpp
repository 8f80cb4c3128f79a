// Sinkhorn–Knopp for mHC's residual mix (docs/schemes.md, "Hyper-connections"); the rest of
// hyper-connections is src/model/residual/hyper_streams.cpp.
//
// Letters: n streams.
#include "model/hyper_conn.hpp"

#include <algorithm>
#include <cmath>

namespace normlab {

template <typename T>
void sinkhorn_forward(const T* L, int n, int iters, T* trace) {
  const int n2 = n * n;
  T top = L[0];
  for (int k = 1; k < n2; ++k) top = std::max(top, L[k]);
  for (int k = 0; k < n2; ++k) trace[k] = std::exp(L[k] - top);
  for (int step = 1; step <= 2 * iters; ++step) {
    const T* X = trace + (step - 1) * n2;
    T* Y = trace + step * n2;
    const bool rows = step % 2 == 1;
    for (int a = 0; a < n; ++a) {
      T sum = 0;
      for (int b = 0; b < n; ++b) sum += rows ? X[a * n + b] : X[b * n + a];
      for (int b = 0; b < n; ++b) {
        const int k = rows ? a * n + b : b * n + a;
        Y[k] = X[k] / sum;
      }
    }
  }
}

template <typename T>
void sinkhorn_backward(const T* trace, int n, int iters, const T* dM, T* dL) {
  const int n2 = n * n;
  std::vector<T> d(dM, dM + n2), dprev(n2);
  for (int step = 2 * iters; step >= 1; --step) {
    const T* X = trace + (step - 1) * n2;
    const T* Y = trace + step * n2;
    const bool rows = step % 2 == 1;
    // Y = X / s along a row (or column): dX = (dY − Σ dY ⊙ Y) / s.
    for (int a = 0; a < n; ++a) {
      T sum = 0, dot = 0;
      for (int b = 0; b < n; ++b) {
        const int k = rows ? a * n + b : b * n + a;
        sum += X[k];
        dot += d[k] * Y[k];
      }
      for (int b = 0; b < n; ++b) {
        const int k = rows ? a * n + b : b * n + a;
        dprev[k] = (d[k] - dot) / sum;
      }
    }
    std::swap(d, dprev);
  }
  // M_0 = exp(L − max L): the max is a common factor every normalization removes.
  for (int k = 0; k < n2; ++k) dL[k] = d[k] * trace[k];
}

template void sinkhorn_forward<float>(const float*, int, int, float*);
template void sinkhorn_forward<double>(const double*, int, int, double*);
template void sinkhorn_backward<float>(const float*, int, int, const float*, float*);
template void sinkhorn_backward<double>(const double*, int, int, const double*, double*);

}  // namespace normlab
