#include "core/kernels/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/contracts.hpp"
#include "core/kernels/alibi.hpp"
#include "core/kernels/block16.hpp"
#include "core/kernels/common_width.hpp"
#include "core/kernels/dot.hpp"
#include "core/kernels/fast_math.hpp"
#include "core/parallel.hpp"
#include "core/scratch.hpp"

namespace normlab {
namespace {

// Rows of keys and features are padded with zeros to a multiple of 16 (block16.hpp), so every
// inner loop works on whole blocks; padding never reaches outputs.

// Copies one head's columns [0, dh) of `rows` rows (stride `stride`) into a dense
// (rows, ld) buffer, zero-padded.
template <typename T>
void gather_rows(const T* src, int64_t stride, int64_t rows, int dh, int64_t ld, T* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < ld; c += kBlock) {
      const Block16<T> v = load_first(src + r * stride + c, dh - c);
      store16(dst + r * ld + c, v);
    }
  }
}

// The inverse: columns [0, dh) of a dense (rows, ld) buffer into rows of stride `stride`.
template <typename T>
void scatter_rows(const T* src, int64_t ld, int64_t rows, int dh, T* dst, int64_t stride) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < dh; c += kBlock) {
      store_first(dst + r * stride + c, dh - c, load16(src + r * ld + c));
    }
  }
}

// The transpose: dst (dh, ld) with dst[c][r] = src[r][c], zero-padded over r.
template <typename T>
void gather_transposed(const T* src, int64_t stride, int64_t rows, int dh, int64_t ld, T* dst) {
  for (int c = 0; c < dh; ++c) {
    for (int64_t r = 0; r < rows; ++r) dst[c * ld + r] = src[r * stride + c];
    for (int64_t r = rows; r < ld; ++r) dst[c * ld + r] = T(0);
  }
}

// Softmax of one row of scores s[0, jp) in place, entries j ≥ jend masked to 0:
//   p_j = exp(scale·(s_j − max)) / Σ exp(...). The mask is applied in registers (a lane-index
//   compare), not by scalar stores into the row, which would stall the vector loads that follow
//   them. Max and sum run in 16 independent lanes reduced in a fixed order (vectorizes without
//   reassociating sums).
template <typename T>
void softmax_row(T* __restrict s, int64_t jend, int64_t jp, T scale) {
  const Block16<T> lane_index = lane_indices<T>();
  Block16<T> lanes = Block16<T>{} - T(INFINITY);
  for (int64_t k0 = 0; k0 < jp; k0 += kBlock) {
    const Block16<T> v = load16(s + k0);
    // lanes inside the row keep the larger value (lanes < v), the others keep theirs
    lanes = where_less(lane_index + T(k0), Block16<T>{} + T(jend), where_less(lanes, v, v, lanes),
                       lanes);
  }
  const T m = max_of_lanes<T>(lanes);
  Block16<T> sum = {};
  for (int64_t k0 = 0; k0 < jp; k0 += kBlock) {
    const Block16<T> e = exp_approx_lanes<T>((load16(s + k0) - m) * scale);
    const Block16<T> kept = where_less(lane_index + T(k0), Block16<T>{} + T(jend), e, Block16<T>{});
    store16(s + k0, kept);
    sum += kept;
  }
  const T inv = T(1) / sum_of_lanes<T>(sum);
  for (int64_t k0 = 0; k0 < jp; k0 += kBlock) {
    const Block16<T> p = load16(s + k0) * inv;
    store16(s + k0, p);
  }
}

// softmax_row for R rows of one block each (rows of ≤ 16 keys), row r's keys j < jend[r]:
// the same operations on each row, written stage by stage over the R rows so that their
// dependency chains (maximum, exp, sum, division) run side by side.
template <int R, typename T>
void softmax_rows_one_block(T* __restrict s, int64_t ld, const int64_t* jend, T scale) {
  const Block16<T> lane_index = lane_indices<T>();
  Block16<T> v[R];
  T m[R];
  for (int r = 0; r < R; ++r) {
    v[r] = load16(s + r * ld);
    m[r] = max_of_lanes<T>(
        where_less(lane_index, Block16<T>{} + T(jend[r]), v[r], Block16<T>{} - T(INFINITY)));
  }
  for (int r = 0; r < R; ++r) {
    const Block16<T> e = exp_approx_lanes<T>((v[r] - m[r]) * scale);
    v[r] = where_less(lane_index, Block16<T>{} + T(jend[r]), e, Block16<T>{});
  }
  for (int r = 0; r < R; ++r) {
    const Block16<T> p = v[r] * (T(1) / sum_of_lanes<T>(v[r]));
    store16(s + r * ld, p);
  }
}

// The softmax's backward for R rows of one block each, in place in ds (attention_backward):
//   dS_ij = P_ij (dP_ij − Σ_k P_ik dP_ik) · scale
// with the same operations as the general loop there, stage by stage over the R rows so that
// their chains (the lane sum, then the scaling) run side by side.
template <int R, typename T>
void softmax_backward_rows_one_block(const T* __restrict p, T* __restrict ds, int64_t ld, T scale) {
  T weighted[R];
  for (int r = 0; r < R; ++r) {
    Block16<T> lanes = {};
    lanes += load16(p + r * ld) * load16(ds + r * ld);
    weighted[r] = sum_of_lanes<T>(lanes);
  }
  for (int r = 0; r < R; ++r) {
    const Block16<T> v = load16(p + r * ld) * (load16(ds + r * ld) - weighted[r]) * scale;
    store16(ds + r * ld, v);
  }
}

// ALiBi on a group of raw scores P (rows, ld), query rows i0 .. i0 + rows − 1, keys [0, jp):
//   P_ij += (m_h / scale) · bias(i, j)
// so that the softmax's scale · P_ij is the scaled logit plus m_h · bias (alibi.hpp). Entries
// beyond a row's own keys are masked by the softmax, whatever they hold.
template <typename T>
void add_alibi(T* P, int64_t ld, int64_t i0, int64_t rows, int64_t jp, double slope_over_scale,
               bool causal) {
  for (int64_t r = 0; r < rows; ++r) {
    T* p = P + r * ld;
    for (int64_t j = 0; j < jp; ++j) p[j] += T(slope_over_scale * alibi_bias(i0 + r, j, causal));
  }
}

// Transformer-XL's relative terms of one head (relative.hpp), laid out so that a query's
// terms over its keys are contiguous slices, and the sums run over whole rows:
//   Rt (dh, W), W = 2T − 1: Rt[c][m] = r_δ[h·dh + c] for δ = T − 1 − m (the keys by descending
//   distance), so query i reads key j's at m = j + T − 1 − i, row c's slice from T − 1 − i;
//   ck (T): ⟨u_h, k_j⟩.
template <typename T>
void relative_columns(const AttentionShape& s, int h, const RelativeLogits<T>& rel, T* Rt) {
  const int64_t W = relative_rows(s.len);
  const int D = s.width, dh = D / s.heads;
  for (int c = 0; c < dh; ++c) {
    for (int64_t m = 0; m < W; ++m) Rt[c * W + m] = rel.keys[(W - 1 - m) * D + h * dh + c];
  }
}

// Adds the relative terms to a group of raw scores P (rows, ld), query rows i0 .. i0 + rows − 1,
// keys [0, jend), of the head at `base` (qkv row stride 3D):
//   P_ij += ⟨u_h, k_j⟩ + Σ_c (q_i + v_h)[c] · Rt[c][j + T − 1 − i]
template <typename T>
void add_relative(T* P, int64_t ld, int64_t i0, int64_t rows, int64_t jend, const T* base,
                  const AttentionShape& s, int h, const RelativeLogits<T>& rel, const T* Rt,
                  const T* ck) {
  const int64_t Tn = s.len, W = relative_rows(Tn), row = 3 * static_cast<int64_t>(s.width);
  const int dh = s.width / s.heads;
  const T* v = rel.v + h * dh;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    T* __restrict p = P + r * ld;
    const T* q = base + i * row;
    for (int64_t j = 0; j < jend; ++j) p[j] += ck[j];
    for (int c = 0; c < dh; ++c) {
      const T a = q[c] + v[c];
      const T* __restrict rt = Rt + c * W + (Tn - 1 - i);
      for (int64_t j = 0; j < jend; ++j) p[j] += a * rt[j];
    }
  }
}

// The relative terms' backward for sequence b, head h (relative.hpp): adds their share to
// dQ and dK (T, dhp) and writes the head's columns of d_rel's row b. dS (T, Tp) is ∂L/∂A, zero
// beyond each row's keys; Q and K (T, dhp) the head's queries and keys. With Rt as above,
//   g_ic = Σ_j dS_ij Rt[c][j + T − 1 − i]   (dq_i and dv_h),   colsum_j = Σ_i dS_ij
//   dRt[c][j + T − 1 − i] += dS_ij (q_i + v_h)[c],   dk_j += colsum_j u_h,
//   du_h = Σ_j colsum_j k_j.
template <typename T>
void relative_backward(const AttentionShape& s, int64_t b, int h, const T* dS, const T* Q,
                       const T* K, int64_t dhp, const RelativeLogits<T>& rel,
                       const RelativeGrads<T>& d_rel, T* dQ, T* dK) {
  const int64_t Tn = s.len, Tp = pad16(Tn), W = relative_rows(Tn);
  const int D = s.width, dh = D / s.heads, c0 = h * dh;
  T* buf = scratch<T>(ScratchUse::attention_relative, 2 * dh * W + Tn);
  T* Rt = buf;               // (dh, W)
  T* dRt = Rt + dh * W;      // (dh, W)
  T* colsum = dRt + dh * W;  // (T)
  relative_columns(s, h, rel, Rt);
  std::fill(dRt, dRt + dh * W + Tn, T(0));
  T* du = d_rel.u + b * D + c0;
  T* dv = d_rel.v + b * D + c0;
  std::fill(dv, dv + dh, T(0));
  const T* u = rel.u + c0;
  const T* v = rel.v + c0;
  for (int64_t i = 0; i < Tn; ++i) {
    const int64_t jend = s.causal ? i + 1 : Tn;
    const T* __restrict ds = dS + i * Tp;
    for (int64_t j = 0; j < jend; ++j) colsum[j] += ds[j];
    for (int c = 0; c < dh; ++c) {
      const int64_t off = c * W + (Tn - 1 - i);
      const T g = dot_lanes(ds, Rt + off, jend);
      dQ[i * dhp + c] += g;
      dv[c] += g;
      const T a = Q[i * dhp + c] + v[c];
      T* __restrict drt = dRt + off;
      for (int64_t j = 0; j < jend; ++j) drt[j] += ds[j] * a;
    }
  }
  for (int64_t j = 0; j < Tn; ++j) {
    for (int c = 0; c < dh; ++c) dK[j * dhp + c] += colsum[j] * u[c];
  }
  for (int c = 0; c < dh; ++c) {
    T sum = 0;
    for (int64_t j = 0; j < Tn; ++j) sum += colsum[j] * K[j * dhp + c];
    du[c] = sum;
  }
  T* dr = d_rel.keys + b * W * D + c0;
  for (int64_t m = 0; m < W; ++m) {
    for (int c = 0; c < dh; ++c) dr[(W - 1 - m) * D + c] = dRt[c * W + m];
  }
}

// Pd = P ⊙ m / (1 − p) for query rows i0 .. i0 + rows − 1 of head (b, h), keys [0, jend) (the
// attention probabilities' dropout, AttentionDropout).
template <typename T>
void drop_probs(const T* P, T* Pd, int64_t ld, int64_t i0, int64_t rows, int64_t jend,
                const AttentionShape& s, int64_t b, int h, const AttentionDropout& d) {
  const T keep_scale = T(d.keep_factor());
  const uint64_t threshold = dropout_threshold(d.p);
  for (int64_t r = 0; r < rows; ++r) {
    dropout_scale_row(P + r * ld, Pd + r * ld, jend, d.index(b, h, s.heads, s.len, i0 + r, 0),
                      keep_scale, threshold, d.key, d.site);
  }
}

// Runs f(known, b, h) for every (sequence b, head h) of s in parallel, known the head width as
// with_head_width gives it (a constant for the studies' head widths).
template <typename F>
void for_each_head(const AttentionShape& s, F&& f) {
  parallel_for(s.batch * s.heads, [&](int64_t task) {
    with_head_width(s.width / s.heads, [&](auto known) {
      f(known, task / s.heads, static_cast<int>(task % s.heads));
    });
  });
}

// The sizes every attention kernel needs: heads divide the width.
void require_attention_shape(const AttentionShape& s, const char* kernel) {
  require_contract(
      s.batch >= 0 && s.len >= 1 && s.heads >= 1 && s.width >= s.heads && s.width % s.heads == 0,
      kernel, "batch >= 0, len >= 1, heads >= 1 dividing width");
}

}  // namespace

int64_t attention_probs_stride(int64_t len) {
  return pad16(len);
}

// Rows are processed in groups of kRows; a group's keys run to the last row's end (causal) and
// the extra entries of its earlier rows are masked to probability 0, so every sum is the same
// as over that row's own keys.
template <typename T>
void attention_forward(const AttentionShape& s, const T* qkv, T* o, T* probs,
                       const RelativeLogits<T>* relative, const AttentionDropout* dropout) {
  require_attention_shape(s, "attention_forward");
  const int64_t Tn = s.len;
  const int D = s.width;
  const int dh_arg = D / s.heads;
  const int64_t Tp = pad16(Tn);
  const int64_t row = 3 * D;
  const int64_t qkv_count = s.batch * Tn * row, o_count = s.batch * Tn * D;
  const int64_t probs_count = s.batch * s.heads * Tn * Tp;
  require_contract(!ranges_overlap<T>(o, o_count, qkv, qkv_count) &&
                       !ranges_overlap<T>(probs, probs_count, qkv, qkv_count) &&
                       !ranges_overlap<T>(probs, probs_count, o, o_count),
                   "attention_forward", "o and probs may not alias qkv or each other");
  const T scale = T(s.scale);
  for_each_head(s, [&](auto known, int64_t b, int h) {
    const int dh = width_or(known, dh_arg);
    const int64_t dhp = pad16(dh);
    const T* base = qkv + b * Tn * row + h * dh;
    T* buf = scratch<T>(ScratchUse::attention_head, 3 * Tn * dhp + dh * Tp);
    T* Q = buf;            // (T, dhp)
    T* Kt = Q + Tn * dhp;  // (dh, Tp) keys transposed
    T* V = Kt + dh * Tp;   // (T, dhp)
    T* O = V + Tn * dhp;   // (T, dhp)
    gather_rows(base, row, Tn, dh, dhp, Q);
    gather_transposed(base + D, row, Tn, dh, Tp, Kt);
    gather_rows(base + 2 * D, row, Tn, dh, dhp, V);
    T* Rt = nullptr;  // relative: (dh, 2T − 1) the keys by column, ck (T) ⟨u_h, k_j⟩
    T* ck = nullptr;
    if (relative != nullptr) {
      Rt = scratch<T>(ScratchUse::attention_relative, dh * relative_rows(Tn) + Tn);
      ck = Rt + dh * relative_rows(Tn);
      relative_columns(s, h, *relative, Rt);
      std::fill(ck, ck + Tn, T(0));
      for (int c = 0; c < dh; ++c) {
        const T uc = relative->u[h * dh + c];
        for (int64_t j = 0; j < Tn; ++j) ck[j] += uc * Kt[c * Tp + j];
      }
    }
    T* P = probs + (b * s.heads + h) * Tn * Tp;  // (T, Tp) for this (b, h)
    for (int64_t i0 = 0; i0 < Tn; i0 += kRows) {
      const int64_t rows = std::min<int64_t>(kRows, Tn - i0);
      const int64_t jend_group = s.causal ? i0 + rows : Tn;
      const int64_t jp = pad16(jend_group);  // keys [0, jp) computed, the rest zero
      T* Pg = P + i0 * Tp;
      rows_times_mat(rows, Q + i0 * dhp, dhp, 1, false, dh, Kt, Tp, jp, Pg, Tp);
      if (s.alibi) add_alibi(Pg, Tp, i0, rows, jp, alibi_slope(h, s.heads) / s.scale, s.causal);
      if (relative != nullptr) {
        add_relative(Pg, Tp, i0, rows, jend_group, base, s, h, *relative, Rt, ck);
      }
      int64_t jend[kRows];  // row r's keys j < jend[r] take part
      for (int64_t r = 0; r < rows; ++r) jend[r] = s.causal ? i0 + r + 1 : Tn;
      if (jp == kBlock && rows == kRows) {
        softmax_rows_one_block<kRows>(Pg, Tp, jend, scale);
      } else {
        for (int64_t r = 0; r < rows; ++r) softmax_row(Pg + r * Tp, jend[r], jp, scale);
      }
      for (int64_t r = 0; r < rows; ++r) std::fill(Pg + r * Tp + jp, Pg + (r + 1) * Tp, T(0));
      // o_i = Σ_j P_ij v_j over the group's keys (P_ij = 0 beyond row i's own), P after
      // dropout when it has one.
      const T* Po = Pg;
      if (dropout != nullptr) {
        T* Pd = scratch<T>(ScratchUse::attention_dropped, kRows * Tp);
        drop_probs(Pg, Pd, Tp, i0, rows, jend_group, s, b, h, *dropout);
        Po = Pd;
      }
      rows_times_mat(rows, Po, Tp, 1, false, jend_group, V, dhp, dhp, O + i0 * dhp, dhp);
    }
    scatter_rows(O, dhp, Tn, dh, o + b * Tn * D + h * dh, D);
  });
}

template <typename T>
void attention_backward(const AttentionShape& s, const T* qkv, const T* probs, const T* d_o,
                        T* dqkv, const RelativeLogits<T>* relative,
                        const RelativeGrads<T>* d_relative, const AttentionDropout* dropout) {
  require_attention_shape(s, "attention_backward");
  require_contract((relative == nullptr) == (d_relative == nullptr), "attention_backward",
                   "relative terms and their gradients both or neither");
  const int64_t Tn = s.len;
  const int D = s.width;
  const int dh_arg = D / s.heads;
  const int64_t Tp = pad16(Tn);
  const int64_t row = 3 * D;
  const int64_t qkv_count = s.batch * Tn * row;
  require_contract(!ranges_overlap<T>(dqkv, qkv_count, qkv, qkv_count) &&
                       !ranges_overlap<T>(dqkv, qkv_count, probs, s.batch * s.heads * Tn * Tp) &&
                       !ranges_overlap<T>(dqkv, qkv_count, d_o, s.batch * Tn * D),
                   "attention_backward", "dqkv may not alias qkv, probs or d_o");
  const T scale = T(s.scale);
  for_each_head(s, [&](auto known, int64_t b, int h) {
    const int dh = width_or(known, dh_arg);
    const int64_t dhp = pad16(dh);
    const T* base = qkv + b * Tn * row + h * dh;
    T* buf = scratch<T>(ScratchUse::attention_head, 6 * Tn * dhp + dh * Tp + Tn * Tp);
    T* Q = buf;             // (T, dhp)
    T* K = Q + Tn * dhp;    // (T, dhp)
    T* Vt = K + Tn * dhp;   // (dh, Tp) values transposed
    T* dO = Vt + dh * Tp;   // (T, dhp)
    T* dQ = dO + Tn * dhp;  // (T, dhp)
    T* dK = dQ + Tn * dhp;  // (T, dhp)
    T* dV = dK + Tn * dhp;  // (T, dhp)
    T* dS = dV + Tn * dhp;  // (T, Tp), zero beyond each row's keys
    gather_rows(base, row, Tn, dh, dhp, Q);
    gather_rows(base + D, row, Tn, dh, dhp, K);
    gather_transposed(base + 2 * D, row, Tn, dh, Tp, Vt);
    gather_rows(d_o + b * Tn * D + h * dh, D, Tn, dh, dhp, dO);
    const T* P = probs + (b * s.heads + h) * Tn * Tp;  // zero beyond each row's keys
    for (int64_t i0 = 0; i0 < Tn; i0 += kRows) {
      const int64_t rows = std::min<int64_t>(kRows, Tn - i0);
      const int64_t jend_group = s.causal ? i0 + rows : Tn;
      const int64_t jp = pad16(jend_group);
      // dP_ij = ⟨dO_i, V_j⟩ for the group's rows and keys; with dropout that is the gradient
      // of the dropped P, and the mask carries it to P.
      rows_times_mat(rows, dO + i0 * dhp, dhp, 1, false, dh, Vt, Tp, jp, dS + i0 * Tp, Tp);
      if (dropout != nullptr) {
        drop_probs(dS + i0 * Tp, dS + i0 * Tp, Tp, i0, rows, jend_group, s, b, h, *dropout);
      }
      if (jp == kBlock && rows == kRows) {  // the loop below, for rows of one block
        softmax_backward_rows_one_block<kRows>(P + i0 * Tp, dS + i0 * Tp, Tp, scale);
        for (int64_t r = 0; r < rows; ++r) {
          std::fill(dS + (i0 + r) * Tp + jp, dS + (i0 + r + 1) * Tp, T(0));
        }
      } else {
        for (int64_t r = 0; r < rows; ++r) {
          const T* p = P + (i0 + r) * Tp;
          T* ds = dS + (i0 + r) * Tp;
          // dS_ij = P_ij (dP_ij − Σ_k P_ik dP_ik) · scale; P_ij = 0 makes dS_ij = 0.
          Block16<T> lanes = {};
          for (int64_t k0 = 0; k0 < jp; k0 += kBlock) lanes += load16(p + k0) * load16(ds + k0);
          const T weighted = sum_of_lanes<T>(lanes);
          for (int64_t k0 = 0; k0 < jp; k0 += kBlock) {
            const Block16<T> v = load16(p + k0) * (load16(ds + k0) - weighted) * scale;
            store16(ds + k0, v);
          }
          std::fill(ds + jp, ds + Tp, T(0));
        }
      }
      // dq_i = Σ_j dS_ij k_j.
      rows_times_mat(rows, dS + i0 * Tp, Tp, 1, false, jend_group, K, dhp, dhp, dQ + i0 * dhp, dhp);
    }
    // dk_j = Σ_i dS_ij q_i and dv_j = Σ_i P_ij do_i: the transposes of dS and P times Q and
    // dO; causal terms with i < j are zero and skipped group by group.
    rows_times_mat(Tn, dS, 1, Tp, s.causal, Tn, Q, dhp, dhp, dK, dhp);
    const T* Pv = P;  // dv reads P after dropout
    if (dropout != nullptr) {
      T* Pd = scratch<T>(ScratchUse::attention_dropped, Tn * Tp);
      for (int64_t i = 0; i < Tn; ++i) {
        drop_probs(P + i * Tp, Pd + i * Tp, Tp, i, 1, s.causal ? i + 1 : Tn, s, b, h, *dropout);
        // The causal sum for key j starts at its group's first row, so rows i < j of j's
        // group read Pd_ij, which must be 0: j in (i, i + kRows).
        if (s.causal) std::fill(Pd + i * Tp + i + 1, Pd + i * Tp + std::min(Tn, i + kRows), T(0));
      }
      Pv = Pd;
    }
    rows_times_mat(Tn, Pv, 1, Tp, s.causal, Tn, dO, dhp, dhp, dV, dhp);
    if (relative != nullptr)
      relative_backward(s, b, h, dS, Q, K, dhp, *relative, *d_relative, dQ, dK);
    T* out = dqkv + b * Tn * row + h * dh;
    scatter_rows(dQ, dhp, Tn, dh, out, row);
    scatter_rows(dK, dhp, Tn, dh, out + D, row);
    scatter_rows(dV, dhp, Tn, dh, out + 2 * D, row);
  });
}

template void attention_forward<float>(const AttentionShape&, const float*, float*, float*,
                                       const RelativeLogits<float>*, const AttentionDropout*);
template void attention_forward<double>(const AttentionShape&, const double*, double*, double*,
                                        const RelativeLogits<double>*, const AttentionDropout*);
template void attention_backward<float>(const AttentionShape&, const float*, const float*,
                                        const float*, float*, const RelativeLogits<float>*,
                                        const RelativeGrads<float>*, const AttentionDropout*);
template void attention_backward<double>(const AttentionShape&, const double*, const double*,
                                         const double*, double*, const RelativeLogits<double>*,
                                         const RelativeGrads<double>*, const AttentionDropout*);

}  // namespace normlab
