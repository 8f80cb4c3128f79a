#include "core/kernels/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/kernels/fast_math.hpp"
#include "core/parallel.hpp"

namespace normlab {
namespace {

// Work on blocks of 16 values (one AVX-512 vector of floats): rows of keys and features are
// padded with zeros to a multiple of 16 and every inner loop has the fixed length 16, so the
// compiler emits whole-vector code without remainder loops. Padding never reaches outputs.
constexpr int64_t kBlock = 16;
int64_t pad16(int64_t n) {
  return (n + kBlock - 1) / kBlock * kBlock;
}

// Copies one head's columns [0, dh) of `rows` rows (stride `stride`) into a dense
// (rows, ld) buffer, zero-padded.
template <typename T>
void gather_rows(const T* src, int64_t stride, int64_t rows, int dh, int64_t ld, T* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int c = 0; c < dh; ++c) dst[r * ld + c] = src[r * stride + c];
    for (int64_t c = dh; c < ld; ++c) dst[r * ld + c] = T(0);
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

// One block of 16 values as a GCC vector (one AVX-512 register of floats): the accumulators of
// rows_times_mat are written with it because GCC 12 does not vectorize a 2-D accumulator array
// along the right axis.
template <typename T>
struct Block16Of;
template <>
struct Block16Of<float> {
  typedef float type __attribute__((vector_size(kBlock * sizeof(float))));
};
template <>
struct Block16Of<double> {
  typedef double type __attribute__((vector_size(kBlock * sizeof(double))));
};
template <typename T>
using Block16 = typename Block16Of<T>::type;

template <typename T>
Block16<T> load16(const T* p) {
  Block16<T> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// out[r][k] = Σ_{c in [c0, c1)} X(r, c) · m[c][k] for r < R and k < cols (a multiple of 16),
// X(r, c) = x[r·rs + c·cs]. The R rows are accumulated side by side, so R independent
// register chains hide the latency of the multiply-adds; each output still sums over c in
// ascending order, exactly as a one-row loop would.
template <int R, typename T>
void rows_times_mat(const T* __restrict x, int64_t rs, int64_t cs, int64_t c0, int64_t c1,
                    const T* __restrict m, int64_t ld, int64_t cols, T* __restrict out,
                    int64_t ldo) {
  for (int64_t k0 = 0; k0 < cols; k0 += kBlock) {
    Block16<T> acc[R] = {};
    for (int64_t c = c0; c < c1; ++c) {
      const Block16<T> mc = load16(m + c * ld + k0);
      for (int r = 0; r < R; ++r) acc[r] += x[r * rs + c * cs] * mc;
    }
    for (int r = 0; r < R; ++r) std::memcpy(out + r * ldo + k0, &acc[r], sizeof(acc[r]));
  }
}

// rows_times_mat over `rows` rows in groups of kRows (the last group smaller). With
// `from_group_start`, the sum of a group starting at row r runs over c in [r, c1) instead of
// [0, c1): for the causal key gradients, whose terms with c < r are all zero.
constexpr int64_t kRows = 4;
template <typename T>
void rows_times_mat(int64_t rows, const T* x, int64_t rs, int64_t cs, bool from_group_start,
                    int64_t c1, const T* m, int64_t ld, int64_t cols, T* out, int64_t ldo) {
  int64_t r = 0;
  for (; r + kRows <= rows; r += kRows) {
    rows_times_mat<kRows>(x + r * rs, rs, cs, from_group_start ? r : 0, c1, m, ld, cols,
                          out + r * ldo, ldo);
  }
  for (; r < rows; ++r) {
    rows_times_mat<1>(x + r * rs, rs, cs, from_group_start ? r : 0, c1, m, ld, cols, out + r * ldo,
                      ldo);
  }
}

// Softmax of one row of scores s[0, jp) in place, entries j ≥ jend masked to 0:
//   p_j = exp(scale·(s_j − max)) / Σ exp(...). Max and sum run in 16 independent lanes
//   reduced in a fixed order (vectorizes without reassociating sums).
template <typename T>
void softmax_row(T* __restrict s, int64_t jend, int64_t jp, T scale) {
  for (int64_t j = jend; j < jp; ++j) s[j] = -INFINITY;
  // The maximum in 16 vector lanes, then across them (exact in any order).
  Block16<T> lanes = load16(s);
  for (int64_t k0 = kBlock; k0 < jp; k0 += kBlock) {
    const Block16<T> v = load16(s + k0);
    lanes = lanes > v ? lanes : v;
  }
  T m = lanes[0];
  for (int l = 1; l < kBlock; ++l) m = std::max(m, lanes[l]);
  for (int64_t j = 0; j < jp; ++j) s[j] = exp_approx((s[j] - m) * scale);
  for (int64_t j = jend; j < jp; ++j) s[j] = 0;
  T sum[kBlock] = {};
  for (int64_t k0 = 0; k0 < jp; k0 += kBlock) {
    for (int l = 0; l < kBlock; ++l) sum[l] += s[k0 + l];
  }
  for (int w = kBlock / 2; w >= 1; w /= 2) {
    for (int l = 0; l < w; ++l) sum[l] += sum[l + w];
  }
  const T inv = T(1) / sum[0];
  for (int64_t j = 0; j < jp; ++j) s[j] *= inv;
}

// Per-thread scratch, grown on first use and reused (no allocation in the steady state).
template <typename T>
T* scratch(int64_t n) {
  thread_local std::vector<T> buffer;
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(n);
  return buffer.data();
}

}  // namespace

int64_t attention_probs_stride(int64_t len) {
  return pad16(len);
}

// Rows are processed in groups of kRows; a group's keys run to the last row's end (causal) and
// the extra entries of its earlier rows are masked to probability 0, so every sum is the same
// as over that row's own keys.
template <typename T>
void attention_forward(const AttentionShape& s, const T* qkv, T* o, T* probs) {
  const int64_t Tn = s.len;
  const int D = s.width;
  const int dh = D / s.heads;
  const int64_t dhp = pad16(dh), Tp = pad16(Tn);
  const int64_t row = 3 * D;
  const T scale = T(s.scale);
  parallel_for(s.batch * s.heads, [&](int64_t task) {
    const int64_t b = task / s.heads;
    const int h = static_cast<int>(task % s.heads);
    const T* base = qkv + b * Tn * row + h * dh;
    T* buf = scratch<T>(3 * Tn * dhp + dh * Tp);
    T* Q = buf;            // (T, dhp)
    T* Kt = Q + Tn * dhp;  // (dh, Tp) keys transposed
    T* V = Kt + dh * Tp;   // (T, dhp)
    T* O = V + Tn * dhp;   // (T, dhp)
    gather_rows(base, row, Tn, dh, dhp, Q);
    gather_transposed(base + D, row, Tn, dh, Tp, Kt);
    gather_rows(base + 2 * D, row, Tn, dh, dhp, V);
    T* P = probs + task * Tn * Tp;  // (T, Tp) for this (b, h)
    for (int64_t i0 = 0; i0 < Tn; i0 += kRows) {
      const int64_t rows = std::min(kRows, Tn - i0);
      const int64_t jend_group = s.causal ? i0 + rows : Tn;
      const int64_t jp = pad16(jend_group);  // keys [0, jp) computed, the rest zero
      T* Pg = P + i0 * Tp;
      if (rows == kRows) {
        rows_times_mat<kRows>(Q + i0 * dhp, dhp, 1, 0, dh, Kt, Tp, jp, Pg, Tp);
      } else {
        rows_times_mat(rows, Q + i0 * dhp, dhp, 1, false, dh, Kt, Tp, jp, Pg, Tp);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t jend = s.causal ? i0 + r + 1 : Tn;  // keys j < jend take part
        T* p = Pg + r * Tp;
        softmax_row(p, jend, jp, scale);
        std::fill(p + jp, p + Tp, T(0));
      }
      // o_i = Σ_j P_ij v_j over the group's keys (P_ij = 0 beyond row i's own).
      rows_times_mat(rows, Pg, Tp, 1, false, jend_group, V, dhp, dhp, O + i0 * dhp, dhp);
    }
    T* out = o + b * Tn * D + h * dh;
    for (int64_t t = 0; t < Tn; ++t) {
      for (int c = 0; c < dh; ++c) out[t * D + c] = O[t * dhp + c];
    }
  });
}

template <typename T>
void attention_backward(const AttentionShape& s, const T* qkv, const T* probs, const T* d_o,
                        T* dqkv) {
  const int64_t Tn = s.len;
  const int D = s.width;
  const int dh = D / s.heads;
  const int64_t dhp = pad16(dh), Tp = pad16(Tn);
  const int64_t row = 3 * D;
  const T scale = T(s.scale);
  parallel_for(s.batch * s.heads, [&](int64_t task) {
    const int64_t b = task / s.heads;
    const int h = static_cast<int>(task % s.heads);
    const T* base = qkv + b * Tn * row + h * dh;
    T* buf = scratch<T>(6 * Tn * dhp + dh * Tp + Tn * Tp);
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
    const T* P = probs + task * Tn * Tp;  // zero beyond each row's keys
    for (int64_t i0 = 0; i0 < Tn; i0 += kRows) {
      const int64_t rows = std::min(kRows, Tn - i0);
      const int64_t jend_group = s.causal ? i0 + rows : Tn;
      const int64_t jp = pad16(jend_group);
      // dP_ij = ⟨dO_i, V_j⟩ for the group's rows and keys.
      rows_times_mat(rows, dO + i0 * dhp, dhp, 1, false, dh, Vt, Tp, jp, dS + i0 * Tp, Tp);
      for (int64_t r = 0; r < rows; ++r) {
        const T* p = P + (i0 + r) * Tp;
        T* ds = dS + (i0 + r) * Tp;
        // dS_ij = P_ij (dP_ij − Σ_k P_ik dP_ik) · scale; P_ij = 0 makes dS_ij = 0.
        T lane[kBlock] = {};
        for (int64_t k0 = 0; k0 < jp; k0 += kBlock) {
          for (int l = 0; l < kBlock; ++l) lane[l] += p[k0 + l] * ds[k0 + l];
        }
        for (int w = kBlock / 2; w >= 1; w /= 2) {
          for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
        }
        const T weighted = lane[0];
        for (int64_t k0 = 0; k0 < jp; k0 += kBlock) {
          for (int l = 0; l < kBlock; ++l) {
            ds[k0 + l] = p[k0 + l] * (ds[k0 + l] - weighted) * scale;
          }
        }
        std::fill(ds + jp, ds + Tp, T(0));
      }
      // dq_i = Σ_j dS_ij k_j.
      rows_times_mat(rows, dS + i0 * Tp, Tp, 1, false, jend_group, K, dhp, dhp, dQ + i0 * dhp, dhp);
    }
    // dk_j = Σ_i dS_ij q_i and dv_j = Σ_i P_ij do_i: the transposes of dS and P times Q and
    // dO; causal terms with i < j are zero and skipped group by group.
    rows_times_mat(Tn, dS, 1, Tp, s.causal, Tn, Q, dhp, dhp, dK, dhp);
    rows_times_mat(Tn, P, 1, Tp, s.causal, Tn, dO, dhp, dhp, dV, dhp);
    T* out = dqkv + b * Tn * row + h * dh;
    for (int64_t t = 0; t < Tn; ++t) {
      for (int c = 0; c < dh; ++c) {
        out[t * row + c] = dQ[t * dhp + c];
        out[t * row + D + c] = dK[t * dhp + c];
        out[t * row + 2 * D + c] = dV[t * dhp + c];
      }
    }
  });
}

template void attention_forward<float>(const AttentionShape&, const float*, float*, float*);
template void attention_forward<double>(const AttentionShape&, const double*, double*, double*);
template void attention_backward<float>(const AttentionShape&, const float*, const float*,
                                        const float*, float*);
template void attention_backward<double>(const AttentionShape&, const double*, const double*,
                                         const double*, double*);

}  // namespace normlab
