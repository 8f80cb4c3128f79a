// nGPT's scales inside the sublayers (docs/schemes.md, "ngpt"), as in the reference
// (NVIDIA/ngpt): the q/k normalization after RoPE with s_qk, and the MLP pre-activation's s_uv.
// Each scale is stored as p and used as p · factor (ngpt_scales, model.hpp). The parameter
// gradients are summed over rows sequentially, so that they do not depend on the thread count.
//
// Letters: N rows, D width, H heads, dh = D / H, M MLP hidden width.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/parallel.hpp"

namespace normlab {

// q and k of a packed (N, 3D) buffer, each head's dh features as one row: out = (s · f) ⊙ q̂
// with q̂ = q · r, r = 1/sqrt(|q|² + eps) (the l2 norm), s (D) shared by q and k; v is copied.
// rstd (2, N·H): r of q, then of k.
template <typename T>
void sphere_qk_forward(const T* in, const T* s, T factor, T* out, T* rstd, int64_t rows, int D,
                       int heads, double eps) {
  const int dh = D / heads;
  for_row_shards(rows, [&](int64_t, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const T* x = in + n * 3 * D;
      T* y = out + n * 3 * D;
      for (int part = 0; part < 2; ++part) {
        for (int h = 0; h < heads; ++h) {
          const int c0 = part * D + h * dh;
          T ss = 0;
          for (int j = 0; j < dh; ++j) ss += x[c0 + j] * x[c0 + j];
          const T r = T(1) / std::sqrt(ss + T(eps));
          rstd[(part * rows + n) * heads + h] = r;
          for (int j = 0; j < dh; ++j) y[c0 + j] = s[h * dh + j] * factor * (x[c0 + j] * r);
        }
      }
      for (int d = 0; d < D; ++d) y[2 * D + d] = x[2 * D + d];
    }
  });
}

// The backward of sphere_qk_forward: d holds dL/d(out) and becomes dL/d(in) (v unchanged);
// ds (D) += factor · Σ_n (q̂ ⊙ dq + k̂ ⊙ dk).
template <typename T>
void sphere_qk_backward(const T* in, const T* s, T factor, const T* rstd, T* d, T* ds, int64_t rows,
                        int D, int heads) {
  const int dh = D / heads;
  for (int64_t n = 0; n < rows; ++n) {
    const T* x = in + n * 3 * D;
    const T* g = d + n * 3 * D;
    for (int part = 0; part < 2; ++part) {
      for (int h = 0; h < heads; ++h) {
        const int c0 = part * D + h * dh;
        const T r = rstd[(part * rows + n) * heads + h];
        for (int j = 0; j < dh; ++j) ds[h * dh + j] += factor * (x[c0 + j] * r) * g[c0 + j];
      }
    }
  }
  for_row_shards(rows, [&](int64_t, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const T* x = in + n * 3 * D;
      T* g = d + n * 3 * D;
      for (int part = 0; part < 2; ++part) {
        for (int h = 0; h < heads; ++h) {
          const int c0 = part * D + h * dh;
          const T r = rstd[(part * rows + n) * heads + h];
          // ĝ = (s · f) ⊙ g; dL/dx = r (ĝ − q̂ (q̂ · ĝ)).
          T dot = 0;
          for (int j = 0; j < dh; ++j) {
            g[c0 + j] *= s[h * dh + j] * factor;
            dot += x[c0 + j] * r * g[c0 + j];
          }
          for (int j = 0; j < dh; ++j) g[c0 + j] = r * (g[c0 + j] - x[c0 + j] * r * dot);
        }
      }
    }
  });
}

// out (N, M) = in ⊙ (s · f), s (M) per column; out may be in.
template <typename T>
void column_scale_forward(const T* in, const T* s, T factor, T* out, int64_t rows, int64_t M) {
  for_row_shards(rows, [&](int64_t, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t m = 0; m < M; ++m) out[n * M + m] = in[n * M + m] * (s[m] * factor);
    }
  });
}

// The backward of column_scale_forward: ds (M) += f · Σ_n in ⊙ d, then d ← d ⊙ (s · f).
template <typename T>
void column_scale_backward(const T* in, const T* s, T factor, T* d, T* ds, int64_t rows,
                           int64_t M) {
  for (int64_t n = 0; n < rows; ++n) {
    for (int64_t m = 0; m < M; ++m) ds[m] += factor * in[n * M + m] * d[n * M + m];
  }
  column_scale_forward(static_cast<const T*>(d), s, factor, d, rows, M);
}

}  // namespace normlab
