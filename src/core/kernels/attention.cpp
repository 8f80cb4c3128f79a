#include "core/kernels/attention.hpp"

#include <algorithm>
#include <cmath>
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

// out[k] = Σ_{r < rows} x[r] · m[r][k] for k < cols (a multiple of 16); each block of 16
// outputs is accumulated in registers over r, in order.
template <typename T>
void vec_mat(const T* __restrict x, int64_t rows, const T* __restrict m, int64_t ld, int64_t cols,
             T* __restrict out) {
  for (int64_t k0 = 0; k0 < cols; k0 += kBlock) {
    T acc[kBlock] = {};
    for (int64_t r = 0; r < rows; ++r) {
      const T xr = x[r];
      const T* mr = m + r * ld + k0;
      for (int l = 0; l < kBlock; ++l) acc[l] += xr * mr[l];
    }
    for (int l = 0; l < kBlock; ++l) out[k0 + l] = acc[l];
  }
}

// y[k] += a · x[k] for k < n (a multiple of 16).
template <typename T>
void axpy16(T* __restrict y, T a, const T* __restrict x, int64_t n) {
  for (int64_t k0 = 0; k0 < n; k0 += kBlock) {
    for (int l = 0; l < kBlock; ++l) y[k0 + l] += a * x[k0 + l];
  }
}

// Softmax of one row of scores s[0, jp) in place, entries j ≥ jend masked to 0:
//   p_j = exp(scale·(s_j − max)) / Σ exp(...). Max and sum run in 16 independent lanes
//   reduced in a fixed order (vectorizes without reassociating sums).
template <typename T>
void softmax_row(T* __restrict s, int64_t jend, int64_t jp, T scale) {
  for (int64_t j = jend; j < jp; ++j) s[j] = -INFINITY;
  T lane[kBlock];
  for (int l = 0; l < kBlock; ++l) lane[l] = s[l];
  for (int64_t k0 = kBlock; k0 < jp; k0 += kBlock) {
    for (int l = 0; l < kBlock; ++l) lane[l] = std::max(lane[l], s[k0 + l]);
  }
  T m = lane[0];
  for (int l = 1; l < kBlock; ++l) m = std::max(m, lane[l]);
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
    T* buf = scratch<T>(2 * Tn * dhp + dh * Tp + dhp);
    T* Q = buf;             // (T, dhp)
    T* Kt = Q + Tn * dhp;   // (dh, Tp) keys transposed
    T* V = Kt + dh * Tp;    // (T, dhp)
    T* acc = V + Tn * dhp;  // (dhp)
    gather_rows(base, row, Tn, dh, dhp, Q);
    gather_transposed(base + D, row, Tn, dh, Tp, Kt);
    gather_rows(base + 2 * D, row, Tn, dh, dhp, V);
    T* P = probs + task * Tn * Tp;  // (T, Tp) for this (b, h)
    for (int64_t i = 0; i < Tn; ++i) {
      // Keys j < jend take part; the row runs over jp = jend rounded up to 16 with the rest
      // masked, and entries up to Tp are zero.
      const int64_t jend = s.causal ? i + 1 : Tn;
      const int64_t jp = pad16(jend);
      T* p = P + i * Tp;
      vec_mat(Q + i * dhp, dh, Kt, Tp, jp, p);
      softmax_row(p, jend, jp, scale);
      std::fill(p + jp, p + Tp, T(0));
      vec_mat(p, jend, V, dhp, dhp, acc);
      T* out = o + (b * Tn + i) * D + h * dh;
      for (int c = 0; c < dh; ++c) out[c] = acc[c];
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
    T* buf = scratch<T>(6 * Tn * dhp + dh * Tp + Tp);
    T* Q = buf;             // (T, dhp)
    T* K = Q + Tn * dhp;    // (T, dhp)
    T* Vt = K + Tn * dhp;   // (dh, Tp) values transposed
    T* dO = Vt + dh * Tp;   // (T, dhp)
    T* dQ = dO + Tn * dhp;  // (T, dhp)
    T* dK = dQ + Tn * dhp;  // (T, dhp)
    T* dV = dK + Tn * dhp;  // (T, dhp)
    T* ds = dV + Tn * dhp;  // (Tp) one row of dS
    gather_rows(base, row, Tn, dh, dhp, Q);
    gather_rows(base + D, row, Tn, dh, dhp, K);
    gather_transposed(base + 2 * D, row, Tn, dh, Tp, Vt);
    gather_rows(d_o + b * Tn * D + h * dh, D, Tn, dh, dhp, dO);
    std::fill(dK, dK + 2 * Tn * dhp, T(0));  // dK, dV accumulate; dQ rows are written
    const T* P = probs + task * Tn * Tp;
    for (int64_t i = 0; i < Tn; ++i) {
      const int64_t jend = s.causal ? i + 1 : Tn;
      const int64_t jp = pad16(jend);
      const T* p = P + i * Tp;  // zero beyond jend
      const T* doi = dO + i * dhp;
      // dP_ij = ⟨dO_i, V_j⟩ for all j at once; dS_ij = P_ij (dP_ij − Σ_k P_ik dP_ik).
      vec_mat(doi, dh, Vt, Tp, jp, ds);
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
      vec_mat(ds, jend, K, dhp, dhp, dQ + i * dhp);
      const T* qi = Q + i * dhp;
      for (int64_t j = 0; j < jend; ++j) {
        axpy16(dK + j * dhp, ds[j], qi, dhp);
        axpy16(dV + j * dhp, p[j], doi, dhp);
      }
    }
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
