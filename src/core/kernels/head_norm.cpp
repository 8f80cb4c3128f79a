#include "core/kernels/head_norm.hpp"

#include <algorithm>
#include <vector>

#include "core/kernels/norm.hpp"
#include "core/parallel.hpp"
#include "core/scratch.hpp"

namespace normlab {
namespace {

// Runs fn(n) for every row n in parallel, in fixed shards.
template <typename F>
void each_row(int64_t rows, F&& fn) {
  parallel_for(shard_count(rows), [&](int64_t s) {
    const int64_t end = std::min(rows, (s + 1) * kRowShard);
    for (int64_t n = s * kRowShard; n < end; ++n) fn(n);
  });
}

// dst (N, D) dense = the part of src (N, 3D) at column offset `off`.
template <typename T>
void gather_part(const T* src, int64_t off, int64_t N, int D, T* dst) {
  each_row(N, [&](int64_t n) {
    std::copy(src + n * 3 * D + off, src + n * 3 * D + off + D, dst + n * D);
  });
}

// The part of dst (N, 3D) at `off` = src (N, D), head h times scale[h] when scale is given.
template <typename T>
void scatter_part(const T* src, const T* scale, int64_t off, int64_t N, int D, int heads, T* dst) {
  const int dh = D / heads;
  each_row(N, [&](int64_t n) {
    const T* in = src + n * D;
    T* out = dst + n * 3 * D + off;
    if (scale == nullptr) {
      std::copy(in, in + D, out);
      return;
    }
    for (int h = 0; h < heads; ++h) {
      for (int c = 0; c < dh; ++c) out[h * dh + c] = scale[h] * in[h * dh + c];
    }
  });
}

}  // namespace

template <typename T>
void head_norm_forward(const HeadNormPart<T>& norm, const HeadNormShape& s, const T* x, T* y,
                       T* normed, T* mean, T* rstd, double eps) {
  const int64_t N = s.rows, off = static_cast<int64_t>(s.part) * s.width;
  const int D = s.width, dh = D / s.heads;
  T* xs = scratch<T>(ScratchUse::head_norm_gathered, N * D);  // (N·H, dh)
  gather_part(x, off, N, D, xs);
  if (norm.kind == NormKind::none) {
    scatter_part(static_cast<const T*>(xs), static_cast<const T*>(nullptr), off, N, D, s.heads, y);
    return;
  }
  T* ns = normed != nullptr ? normed : scratch<T>(ScratchUse::head_norm_normed, N * D);
  norm_forward(NormWeights<T>{norm.kind, norm.gain, norm.bias, norm.scalars},
               static_cast<const T*>(xs), ns, {mean, rstd}, {N * s.heads, dh}, eps);
  scatter_part(static_cast<const T*>(ns), norm.head_scale, off, N, D, s.heads, y);
}

template <typename T>
void head_norm_backward(const HeadNormPart<T>& norm, const HeadNormShape& s, const T* x,
                        const T* normed, const T* mean, const T* rstd, const T* dy, T* dx, T* dgain,
                        T* dbias, T* dscalars, T* dhead_scale) {
  const int64_t N = s.rows, off = static_cast<int64_t>(s.part) * s.width;
  const int D = s.width, heads = s.heads, dh = D / heads;
  T* g = scratch<T>(ScratchUse::head_norm_gathered, N * D);  // dL/dy's part, then dL/dn̂
  gather_part(dy, off, N, D, g);
  if (norm.kind == NormKind::none) {
    if (dx != dy)
      scatter_part(static_cast<const T*>(g), static_cast<const T*>(nullptr), off, N, D, heads, dx);
    return;
  }
  if (norm.head_scale != nullptr) {
    // ds_h = Σ dy ⊙ n̂ over rows and the head's features, sequential (a fixed order of sums);
    // then dn̂ = s_h · dy.
    for (int64_t n = 0; n < N; ++n) {
      for (int h = 0; h < heads; ++h) {
        T* gr = g + n * D + h * dh;
        const T* nr = normed + n * D + h * dh;
        T sum = 0;
        for (int c = 0; c < dh; ++c) sum += gr[c] * nr[c];
        if (dhead_scale != nullptr) dhead_scale[h] += sum;
        for (int c = 0; c < dh; ++c) gr[c] *= norm.head_scale[h];
      }
    }
  }
  T* xs = scratch<T>(ScratchUse::head_norm_normed, N * D);
  gather_part(x, off, N, D, xs);
  T* dxs = zeroed_scratch<T>(ScratchUse::head_norm_gradient, N * D);
  norm_backward(NormWeights<T>{norm.kind, norm.gain, nullptr, norm.scalars},
                static_cast<const T*>(xs), {mean, rstd}, static_cast<const T*>(g), dxs,
                NormGrads<T>{dgain, dbias, dscalars}, {N * heads, dh});
  scatter_part(static_cast<const T*>(dxs), static_cast<const T*>(nullptr), off, N, D, heads, dx);
}

template void head_norm_forward<float>(const HeadNormPart<float>&, const HeadNormShape&,
                                       const float*, float*, float*, float*, float*, double);
template void head_norm_forward<double>(const HeadNormPart<double>&, const HeadNormShape&,
                                        const double*, double*, double*, double*, double*, double);
template void head_norm_backward<float>(const HeadNormPart<float>&, const HeadNormShape&,
                                        const float*, const float*, const float*, const float*,
                                        const float*, float*, float*, float*, float*, float*);
template void head_norm_backward<double>(const HeadNormPart<double>&, const HeadNormShape&,
                                         const double*, const double*, const double*, const double*,
                                         const double*, double*, double*, double*, double*,
                                         double*);

}  // namespace normlab
