#include "core/kernels/attnres.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/contracts.hpp"
#include "core/kernels/common_width.hpp"
#include "core/kernels/dot.hpp"
#include "core/kernels/fast_math.hpp"
#include "core/parallel.hpp"
#include "core/scratch.hpp"

namespace normlab {
namespace {

// q = w ⊙ g (D), in a scratch buffer of the calling thread.
template <typename T>
const T* query_times_gain(const T* w, const T* g, int D) {
  T* q = scratch<T>(ScratchUse::attnres_query, D);
  for (int d = 0; d < D; ++d) q[d] = w[d] * g[d];
  return q;
}

}  // namespace

template <typename T>
void res_rstd(const T* s, T* r, int64_t N, int D, double eps) {
  for_row_shards(N, [&](int64_t sh, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const T* row = s + n * D;
      T ss = 0;
      for (int d = 0; d < D; ++d) ss += row[d] * row[d];
      r[n] = T(1) / std::sqrt(ss / T(D) + T(eps));
    }
  });
}

// Each row shard is processed a few sources at a time (kSourcesPerPass): a source's rows of the
// shard are one contiguous block, so memory is read in a few long sequential runs however many
// sources there are (row by row over all K, interleaved streams defeat the prefetchers and ran
// about 2× slower), and each row of x is read and written once per pass instead of once per
// source.
constexpr int kSourcesPerPass = 4;

// x_row (D) += Σ_{j<C} a[j] s[j] (x_row = that sum when first), the terms added in the order
// j = 0..C−1, each as x ← fma(a_j, s_j, x): the rounding of adding one source at a time, C
// sources per pass over the row. The fma is explicit because in a·s + b·t the compiler may fuse
// either product (one source at a time, the stored x left it only one choice).
template <int C, typename T>
inline void add_sources_to_row(const T* const* s, const T* a, bool first, T* __restrict x_row,
                               int D) {
  for (int d = 0; d < D; ++d) {
    T acc = first ? a[0] * s[0][d] : std::fma(a[0], s[0][d], x_row[d]);
    for (int j = 1; j < C; ++j) acc = std::fma(a[j], s[j][d], acc);
    x_row[d] = acc;
  }
}

// Rows ahead of the current row whose sources (and, in the backward, gradients) the kernels ask
// the memory for (software prefetch, which changes no value). Without it block_attnres(2)'s
// training step at L = 32, D = 64 was about 3% slower (docs/performance-log.md, "AttnRes's
// backward prefetches its rows").
constexpr int64_t kPrefetchRows = 4;

// Asks for the cache lines of D contiguous values (one row, or several) ahead of their use.
template <typename T>
inline void prefetch_row(const T* row, int D, bool for_write) {
  const char* bytes = reinterpret_cast<const char*>(row);
  const int64_t size = static_cast<int64_t>(D) * static_cast<int64_t>(sizeof(T));
  for (int64_t b = 0; b < size; b += 64) {  // 64-byte cache lines
    if (for_write) {
      __builtin_prefetch(bytes + b, 1);
    } else {
      __builtin_prefetch(bytes + b, 0);
    }
  }
}

// ℓ (16 rows n..n+15, one per lane) = r[n + i] · ⟨q, s[n + i]⟩ of one source s (rows of W):
// the 16 dot products' lane sums reduced together (sums_of_lanes16, the bits of dot_lanes).
template <typename T>
[[gnu::always_inline]] inline Block16<T> logits_of_16_rows(const T* __restrict q,
                                                           const T* __restrict s, const T* r,
                                                           int W) {
  Block16<T> lanes[kBlock];
  for (int i = 0; i < kBlock; ++i) lanes[i] = dot_lane_sums(q, s + i * W, W);
  return load16(r) * sums_of_lanes16<T>(lanes);
}

// The logits of rows [n0, n1) of one source s for P queries: out[p][n − n0] = r[n] · ⟨q_p, s_n⟩.
// Rows go 16 at a time (one per lane, their rows read from L1 by every query), a shard's last
// rows short of 16 one by one; both give dot_lanes's bits, so a logit does not depend on which
// rows it was computed with.
template <typename T>
[[gnu::always_inline]] inline void logits_of_rows(const T* s, const T* r, const T* const* q,
                                                  T* const* out, int P, int64_t n0, int64_t n1,
                                                  int W) {
  const int64_t grouped_end = n0 + (n1 - n0) / kBlock * kBlock;
  for (int64_t n = n0; n < grouped_end; n += kBlock) {
    // The logits are the first to read each source row: the next group's lines are asked for
    // ahead of their use.
    if (n + 2 * kBlock <= n1)
      prefetch_row(s + (n + kBlock) * W, static_cast<int>(kBlock) * W, false);
    for (int p = 0; p < P; ++p) {
      const Block16<T> l = logits_of_16_rows(q[p], s + n * W, r + n, W);
      store16(out[p] + (n - n0), l);
    }
  }
  for (int64_t n = grouped_end; n < n1; ++n) {
    for (int p = 0; p < P; ++p) out[p][n - n0] = r[n] * dot_lanes(q[p], s + n * W, W);
  }
}

// Rows [n0, n1) of one mixing point, given their logits: row n of source k at
// lt[k·stride + n − n0], overwritten with the exponentials. The softmax over k goes 16 rows at a
// time, one row per lane (the reductions, exponentials and sums of 16 rows as single vector
// operations; the per-row arithmetic is unchanged), the last rows short of 16 one by one; α goes
// to its (N, K) rows. Then the mixture, C sources at a time.
template <typename T>
[[gnu::always_inline]] inline void softmax_and_mix(const T* const* src, int K, T* lt,
                                                   int64_t stride, T* x, T* alpha, int64_t n0,
                                                   int64_t n1, int W) {
  const int64_t grouped_end = n0 + (n1 - n0) / kBlock * kBlock;
  for (int64_t n = n0; n < grouped_end; n += kBlock) {
    T* l0 = lt + (n - n0);
    Block16<T> m = load16(l0);
    for (int k = 1; k < K; ++k) {
      const Block16<T> lk = load16(l0 + k * stride);
      m = where_less(m, lk, lk, m);  // std::max(m, ℓ_k)
    }
    Block16<T> z = {};
    for (int k = 0; k < K; ++k) {
      const Block16<T> e = exp_approx_lanes<T>(load16(l0 + k * stride) - m);
      store16(l0 + k * stride, e);
      z += e;
    }
    const Block16<T> inv = T(1) / z;
    for (int k = 0; k < K; ++k) {
      const Block16<T> a = load16(l0 + k * stride) * inv;
      for (int i = 0; i < kBlock; ++i) alpha[(n + i) * K + k] = a[i];
    }
  }
  for (int64_t n = grouped_end; n < n1; ++n) {
    T* l0 = lt + (n - n0);
    T* a = alpha + n * K;
    T m = l0[0];
    for (int k = 1; k < K; ++k) m = std::max(m, l0[k * stride]);
    T z = 0;
    for (int k = 0; k < K; ++k) z += a[k] = exp_approx(l0[k * stride] - m);
    const T inv = T(1) / z;
    for (int k = 0; k < K; ++k) a[k] *= inv;
  }
  for (int k0 = 0; k0 < K; k0 += kSourcesPerPass) {
    const int C = std::min(kSourcesPerPass, K - k0);
    for (int64_t n = n0; n < n1; ++n) {
      const T* rows[kSourcesPerPass];
      for (int j = 0; j < C; ++j) rows[j] = src[k0 + j] + n * W;
      const T* a = alpha + n * K + k0;
      T* xr = x + n * W;
      switch (C) {
        case 1:
          add_sources_to_row<1>(rows, a, k0 == 0, xr, W);
          break;
        case 2:
          add_sources_to_row<2>(rows, a, k0 == 0, xr, W);
          break;
        case 3:
          add_sources_to_row<3>(rows, a, k0 == 0, xr, W);
          break;
        default:
          add_sources_to_row<4>(rows, a, k0 == 0, xr, W);
          break;
      }
    }
  }
}

template <typename T>
void require_no_alias_of_sources(const char* kernel, const T* const* src, int K, const T* x,
                                 const T* alpha, int64_t N, int D) {
  for (int k = 0; k < K; ++k) {
    require_contract(!ranges_overlap<T>(x, N * D, src[k], N * D) &&
                         !ranges_overlap<T>(alpha, N * K, src[k], N * D),
                     kernel, "x and alpha may not alias a source");
  }
}

// Per shard: the logits source by source into a scratch block, then softmax_and_mix.
template <typename T>
void res_mix_forward(const T* const* src, const T* const* rstd, int K, const T* w, const T* g, T* x,
                     T* alpha, int64_t N, int D) {
  require_contract(K >= 1 && N >= 0 && D >= 1, "res_mix_forward", "K >= 1 sources, N >= 0, D >= 1");
  require_no_alias_of_sources("res_mix_forward", src, K, x, alpha, N, D);
  const T* q = query_times_gain(w, g, D);
  for_row_shards(N, [&](int64_t sh, int64_t n0, int64_t n1) {
    // the shard's logits, then exponentials, by source: (K, kRowShard)
    T* lt = scratch<T>(ScratchUse::attnres_shard_logits, static_cast<int64_t>(K) * kRowShard);
    with_common_width(D, [&](auto width) {
      const int W = width_or(width, D);
      for (int k = 0; k < K; ++k) {
        T* out = lt + k * kRowShard;
        logits_of_rows(src[k], rstd[k], &q, &out, 1, n0, n1, W);
      }
      softmax_and_mix(src, K, lt, kRowShard, x, alpha, n0, n1, W);
    });
  });
}

template <typename T>
void res_logits(const T* s, const T* r, const T* const* q, T* const* out, int P, int64_t N, int D) {
  require_contract(P >= 0 && N >= 0 && D >= 1, "res_logits", "P >= 0 points, N >= 0, D >= 1");
  if (P == 0) return;
  for_row_shards(N, [&](int64_t sh, int64_t n0, int64_t n1) {
    // Each point's logits of the shard's rows start at out[p] + n0.
    T** shard_out = scratch<T*>(ScratchUse::attnres_logit_rows, P);
    for (int p = 0; p < P; ++p) shard_out[p] = out[p] + n0;
    with_common_width(
        D, [&](auto width) { logits_of_rows(s, r, q, shard_out, P, n0, n1, width_or(width, D)); });
  });
}

template <typename T>
void res_mix_from_logits(const T* const* src, int K, T* logits, T* x, T* alpha, int64_t N, int D) {
  require_contract(K >= 1 && N >= 0 && D >= 1, "res_mix_from_logits",
                   "K >= 1 sources, N >= 0, D >= 1");
  require_no_alias_of_sources("res_mix_from_logits", src, K, x, alpha, N, D);
  for_row_shards(N, [&](int64_t sh, int64_t n0, int64_t n1) {
    with_common_width(D, [&](auto width) {
      softmax_and_mix(src, K, logits + n0, N, x, alpha, n0, n1, width_or(width, D));
    });
  });
}

// The terms of R consecutive rows n.. of source k from the P points: dsk (rows of W) += Σ_p
// α_k dx + dℓ_k r (q − s r ℓ/D), and each point's dq partial (W) += dℓ_k r s, row by row.
// c[p·c_stride + i] = ⟨dx_p, x_p⟩ of row n + i, r[i] its r_k. With the width a multiple of 16
// known at compile time (NB blocks of 16, W = 16·NB) the source rows and their gradients stay in
// registers across the points, each point's dot products, coefficients and updates are
// straight-line vector code, and a point's dq partial is loaded and stored once for the R rows
// (its load-add-store per row was about a quarter of the kernel's time: docs/performance-log.md,
// "AttnRes (item 6): the forward 16 rows per vector, the backward two rows per pass").
// The values are those of one row at a time: the dot products are dot_lanes's lane sums, the
// updates the same expression per element, and dq adds the rows in ascending order.
template <int NB, int R, typename T>
[[gnu::always_inline]] inline void source_rows_backward(const T* __restrict sk, T* __restrict dsk,
                                                        const T* r, int64_t n, int k,
                                                        const ResMixPoint<T>* points, int P,
                                                        const T* q_base, T* dq_base, const T* c,
                                                        int64_t c_stride, T inv_d) {
  constexpr int W = NB * static_cast<int>(kBlock);
  Block16<T> s[R][NB], ds[R][NB];
  for (int i = 0; i < R; ++i) {
    for (int b = 0; b < NB; ++b) {
      s[i][b] = load16(sk + i * W + b * kBlock);
      ds[i][b] = load16(dsk + i * W + b * kBlock);
    }
  }
  for (int p = 0; p < P; ++p) {
    const ResMixPoint<T>& pt = points[p];
    const T* __restrict q = q_base + p * W;
    T* __restrict dq = dq_base + p * W;
    T cq[R];  // coefficient of q in ds_k, and of s_k in dq, per row
    for (int i = 0; i < R; ++i) {
      const T* __restrict dxr = pt.dx + (n + i) * W;
      Block16<T> dx_s = {}, q_s = {};
      for (int b = 0; b < NB; ++b) {
        dx_s += load16(dxr + b * kBlock) * s[i][b];
        q_s += load16(q + b * kBlock) * s[i][b];
      }
      const T ak = pt.alpha[(n + i) * pt.alpha_stride + pt.alpha_col + k];
      const T dl = ak * (sum_of_lanes<T>(dx_s) - c[p * c_stride + i]);  // dℓ_k
      cq[i] = dl * r[i];
      const T cs = -cq[i] * r[i] * (r[i] * sum_of_lanes<T>(q_s)) * inv_d;
      for (int b = 0; b < NB; ++b) {
        ds[i][b] += ak * load16(dxr + b * kBlock) + cq[i] * load16(q + b * kBlock) + cs * s[i][b];
      }
    }
    for (int b = 0; b < NB; ++b) {
      Block16<T> dqb = load16(dq + b * kBlock);
      for (int i = 0; i < R; ++i) dqb = dqb + cq[i] * s[i][b];
      store16(dq + b * kBlock, dqb);
    }
  }
  for (int i = 0; i < R; ++i) {
    for (int b = 0; b < NB; ++b) {
      store16(dsk + i * W + b * kBlock, ds[i][b]);
    }
  }
}

// One row n of source k at a run-time width W: the same terms as source_rows_backward.
template <typename T>
inline void source_row_backward(const T* __restrict sk, T* __restrict dsk, T r, int64_t n, int k,
                                const ResMixPoint<T>* points, int P, const T* q_base, T* dq_base,
                                const T* c, int64_t c_stride, T inv_d, int W) {
  for (int p = 0; p < P; ++p) {
    const ResMixPoint<T>& pt = points[p];
    const T* __restrict q = q_base + p * W;
    const T* __restrict dxr = pt.dx + n * W;
    T* __restrict dq = dq_base + p * W;
    const T ak = pt.alpha[n * pt.alpha_stride + pt.alpha_col + k];
    const T dl = ak * (dot_lanes(dxr, sk, W) - c[p * c_stride]);  // dℓ_k
    const T cq = dl * r;
    const T cs = -cq * r * (r * dot_lanes(q, sk, W)) * inv_d;
    for (int d = 0; d < W; ++d) {
      dsk[d] += ak * dxr[d] + cq * q[d] + cs * sk[d];
      dq[d] += cq * sk[d];
    }
  }
}

// One pass over the sources: Σ_m α_m dα_m = ⟨dx, Σ_m α_m s_m⟩ = ⟨dx, x⟩ is known before it,
// so each source block is read once and its gradient block updated once (in L1 while the P
// points add to it).
template <typename T>
void res_mix_backward(const T* const* src, const T* const* rstd, T* const* dsrc, int K,
                      const ResMixPoint<T>* points, int P, int64_t N, int D) {
  const int64_t shards = shard_count(N);
  // q_p = w_p ⊙ g_p, and per-shard partial dq_p summed in shard order afterwards.
  T* qs = scratch<T>(ScratchUse::attnres_queries, static_cast<int64_t>(P) * D);
  for (int p = 0; p < P; ++p) {
    for (int d = 0; d < D; ++d) qs[p * D + d] = points[p].w[d] * points[p].g[d];
  }
  T* partial = zeroed_scratch<T>(ScratchUse::attnres_partial, shards * P * D);
  const T* q_base = qs;
  T* partial_base = partial;
  const T inv_d = T(1) / T(D);
  for_row_shards(N, [&](int64_t sh, int64_t n0, int64_t n1) {
    // ⟨dx_p, x_p⟩ of each row, (P, rows)
    T* c = scratch<T>(ScratchUse::attnres_row_dots, static_cast<int64_t>(P) * kRowShard);
    for (int p = 0; p < P; ++p) {
      for (int64_t n = n0; n < n1; ++n) {
        c[p * kRowShard + n - n0] = dot_lanes(points[p].dx + n * D, points[p].x + n * D, D);
      }
    }
    with_common_width(D, [&](auto width) {
      // D as a constant where it is a common width: the dot products and the row update
      // unroll completely (the loops over a run-time D made it about 20% slower at D = 64).
      const int W = width_or(width, D);
      constexpr int kBlocks = static_cast<int>(decltype(width)::value / kBlock);  // 0: run-time
      T* dq_shard = partial_base + sh * P * W;
      for (int k = 0; k < K; ++k) {
        const T* rk = rstd[k];
        if constexpr (kBlocks > 0) {
          // Two rows at a time (then a last one), so each dq partial is updated once per pair.
          int64_t n = n0;
          for (; n + 2 <= n1; n += 2) {
            if (n + kPrefetchRows + 2 <= n1) {
              prefetch_row(src[k] + (n + kPrefetchRows) * W, 2 * W, false);
              prefetch_row(dsrc[k] + (n + kPrefetchRows) * W, 2 * W, true);
            }
            source_rows_backward<kBlocks, 2>(src[k] + n * W, dsrc[k] + n * W, rk + n, n, k, points,
                                             P, q_base, dq_shard, c + (n - n0), kRowShard, inv_d);
          }
          if (n < n1) {
            source_rows_backward<kBlocks, 1>(src[k] + n * W, dsrc[k] + n * W, rk + n, n, k, points,
                                             P, q_base, dq_shard, c + (n - n0), kRowShard, inv_d);
          }
        } else {
          for (int64_t n = n0; n < n1; ++n) {
            const T* __restrict sk = src[k] + n * W;
            T* __restrict dsk = dsrc[k] + n * W;
            if (n + kPrefetchRows < n1) {
              prefetch_row(sk + kPrefetchRows * W, W, false);
              prefetch_row(dsk + kPrefetchRows * W, W, true);
            }
            source_row_backward(sk, dsk, rk[n], n, k, points, P, q_base, dq_shard, c + (n - n0),
                                kRowShard, inv_d, W);
          }
        }
      }
    });
  });
  for (int p = 0; p < P; ++p) {
    const ResMixPoint<T>& pt = points[p];
    for (int64_t sh = 0; sh < shards; ++sh) {
      const T* part = partial_base + (sh * P + p) * D;
      for (int d = 0; d < D; ++d) {
        pt.dw[d] += part[d] * pt.g[d];
        pt.dg[d] += part[d] * pt.w[d];
      }
    }
  }
}

#define NORMLAB_INSTANTIATE(T)                                                                    \
  template void res_rstd<T>(const T*, T*, int64_t, int, double);                                  \
  template void res_mix_forward<T>(const T* const*, const T* const*, int, const T*, const T*, T*, \
                                   T*, int64_t, int);                                             \
  template void res_mix_backward<T>(const T* const*, const T* const*, T* const*, int,             \
                                    const ResMixPoint<T>*, int, int64_t, int);                    \
  template void res_logits<T>(const T*, const T*, const T* const*, T* const*, int, int64_t, int); \
  template void res_mix_from_logits<T>(const T* const*, int, T*, T*, T*, int64_t, int);
NORMLAB_INSTANTIATE(float)
NORMLAB_INSTANTIATE(double)
#undef NORMLAB_INSTANTIATE

}  // namespace normlab
