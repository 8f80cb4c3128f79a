#include "core/kernels/attention.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/dot.hpp"
#include "core/parallel.hpp"

namespace normlab {
namespace {

// Head dimension rounded up to a multiple of 16, so the inner loops over features run on
// whole SIMD vectors; the padding is zero and never reaches the outputs.
int padded(int dh) {
  return (dh + 15) / 16 * 16;
}

// Copies one head's columns [col, col + dh) of `rows` rows (stride `stride`) into a dense
// (rows, dhp) buffer, zero-padded.
template <typename T>
void gather_head(const T* src, int64_t stride, int64_t rows, int dh, int dhp, T* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* s = src + r * stride;
    T* d = dst + r * dhp;
    for (int c = 0; c < dh; ++c) d[c] = s[c];
    for (int c = dh; c < dhp; ++c) d[c] = T(0);
  }
}

// y += a · x over n elements; restrict lets the compiler vectorize without alias checks.
template <typename T>
void axpy(T* __restrict y, T a, const T* __restrict x, int n) {
  for (int c = 0; c < n; ++c) y[c] += a * x[c];
}

// Per-thread scratch, grown on first use and reused (no allocation in the steady state).
template <typename T>
T* scratch(int64_t n) {
  thread_local std::vector<T> buffer;
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(n);
  return buffer.data();
}

}  // namespace

template <typename T>
void attention_forward(const AttentionShape& s, const T* qkv, T* o, T* probs) {
  const int64_t Tn = s.len;
  const int D = s.width;
  const int dh = D / s.heads;
  const int dhp = padded(dh);
  const int64_t row = 3 * D;
  const T scale = T(s.scale);
  parallel_for(s.batch * s.heads, [&](int64_t task) {
    const int64_t b = task / s.heads;
    const int h = static_cast<int>(task % s.heads);
    const T* base = qkv + b * Tn * row + h * dh;
    T* buf = scratch<T>(3 * Tn * dhp + dhp);
    T* Q = buf;             // (T, dhp)
    T* K = Q + Tn * dhp;    // (T, dhp)
    T* V = K + Tn * dhp;    // (T, dhp)
    T* acc = V + Tn * dhp;  // (dhp)
    gather_head(base, row, Tn, dh, dhp, Q);
    gather_head(base + D, row, Tn, dh, dhp, K);
    gather_head(base + 2 * D, row, Tn, dh, dhp, V);
    T* P = probs + task * Tn * Tn;  // (T, T) for this (b, h)
    for (int64_t i = 0; i < Tn; ++i) {
      const int64_t jend = s.causal ? i + 1 : Tn;
      T* p = P + i * Tn;
      T max_logit = -INFINITY;
      for (int64_t j = 0; j < jend; ++j) {
        p[j] = dot_lanes(Q + i * dhp, K + j * dhp, dhp) * scale;
        max_logit = std::max(max_logit, p[j]);
      }
      T sum = 0;
      for (int64_t j = 0; j < jend; ++j) {
        p[j] = std::exp(p[j] - max_logit);
        sum += p[j];
      }
      const T inv = T(1) / sum;
      for (int64_t j = 0; j < jend; ++j) p[j] *= inv;
      for (int64_t j = jend; j < Tn; ++j) p[j] = 0;
      for (int c = 0; c < dhp; ++c) acc[c] = 0;
      for (int64_t j = 0; j < jend; ++j) {
        axpy(acc, p[j], V + j * dhp, dhp);
      }
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
  const int dhp = padded(dh);
  const int64_t row = 3 * D;
  const T scale = T(s.scale);
  parallel_for(s.batch * s.heads, [&](int64_t task) {
    const int64_t b = task / s.heads;
    const int h = static_cast<int>(task % s.heads);
    const T* base = qkv + b * Tn * row + h * dh;
    T* buf = scratch<T>(7 * Tn * dhp + Tn);
    T* Q = buf;  // (T, dhp)
    T* K = Q + Tn * dhp;
    T* V = K + Tn * dhp;
    T* dO = V + Tn * dhp;
    T* dQ = dO + Tn * dhp;
    T* dK = dQ + Tn * dhp;
    T* dV = dK + Tn * dhp;
    T* dp = dV + Tn * dhp;  // (T) one row of dP
    gather_head(base, row, Tn, dh, dhp, Q);
    gather_head(base + D, row, Tn, dh, dhp, K);
    gather_head(base + 2 * D, row, Tn, dh, dhp, V);
    gather_head(d_o + b * Tn * D + h * dh, D, Tn, dh, dhp, dO);
    std::fill(dQ, dQ + 3 * Tn * dhp, T(0));  // dQ, dK, dV
    const T* P = probs + task * Tn * Tn;
    for (int64_t i = 0; i < Tn; ++i) {
      const int64_t jend = s.causal ? i + 1 : Tn;
      const T* p = P + i * Tn;
      const T* doi = dO + i * dhp;
      const T* qi = Q + i * dhp;
      T* dqi = dQ + i * dhp;
      T weighted = 0;  // Σ_j P_ij dP_ij
      for (int64_t j = 0; j < jend; ++j) {
        dp[j] = dot_lanes(doi, V + j * dhp, dhp);
        weighted += p[j] * dp[j];
      }
      for (int64_t j = 0; j < jend; ++j) {
        const T pj = p[j];
        const T ds = pj * (dp[j] - weighted) * scale;
        const T* kj = K + j * dhp;
        T* dkj = dK + j * dhp;
        T* dvj = dV + j * dhp;
        axpy(dvj, pj, doi, dhp);
        axpy(dqi, ds, kj, dhp);
        axpy(dkj, ds, qi, dhp);
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
