// Per-head norms of the q, k and v parts of a packed qkv buffer (QK-norm; HybridNorm's
// QKV-norm; docs/schemes.md).
//
// Letters: N rows, D width, H heads, dh = D / H. qkv (N, 3D): row n holds q (D) | k (D) | v (D);
// part p ∈ {0 q, 1 k, 2 v} is columns [p·D, (p+1)·D), head h its columns [h·dh, (h+1)·dh).
// Each head's dh features of a part are one row of the norm (norm.hpp: the same kinds, eps and
// formulas, with D = dh), whose parameters (gain, bias (dh), scalars) every head shares:
//   n̂[n, h, :] = N(x[n, p·D + h·dh + :])                    (N·H rows of dh)
//   y[n, p·D + h·dh + c] = s_h · n̂[n, h, c]                  s_h = 1 without a head scale
// Backward, with dy the gradient of y's part:
//   ds_h += Σ_{n, c} dy[n, p·D + h·dh + c] · n̂[n, h, c]
//   dn̂ = s_h · dy, then the norm's backward (norm.hpp) over the N·H rows gives dx's part.
#pragma once

#include <cstdint>

#include "normlab/base/norm_kind.hpp"

namespace normlab {

// The norm of one part. kind none: the part is copied (forward) or passed on (backward).
template <typename T>
struct HeadNormPart {
  NormKind kind = NormKind::none;
  const T* gain = nullptr;        // (dh) when the kind has one
  const T* bias = nullptr;        // (dh) when the kind has one
  const T* scalars = nullptr;     // the kind's scalars (norm_scalar_count)
  const T* head_scale = nullptr;  // (H) s_h, or null for 1
};

struct HeadNormShape {
  int64_t rows;  // N
  int width;     // D
  int heads;     // H
  int part;      // 0 q, 1 k, 2 v
};

// Writes part `s.part` of y (N, 3D) from the same part of x (N, 3D); y may not alias x.
// normed (N, D) receives n̂ (heads concatenated) when not null; the backward of a part with a
// head scale needs it. mean, rstd (N·H) receive the norm's statistics (unused for kind none).
template <typename T>
void head_norm_forward(const HeadNormPart<T>& norm, const HeadNormShape& s, const T* x, T* y,
                       T* normed, T* mean, T* rstd, double eps);

// Overwrites part `s.part` of dx (N, 3D) with the gradient through the norm given dy (N, 3D)'s
// part; dy and dx may be the same buffer. dgain, dbias (dh), dscalars and dhead_scale (H) +=
// the parameter gradients (each null when absent). x, normed, mean, rstd as the forward left
// them (normed may be null without a head scale).
template <typename T>
void head_norm_backward(const HeadNormPart<T>& norm, const HeadNormShape& s, const T* x,
                        const T* normed, const T* mean, const T* rstd, const T* dy, T* dx, T* dgain,
                        T* dbias, T* dscalars, T* dhead_scale);

}  // namespace normlab
