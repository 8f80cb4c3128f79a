#include "core/kernels/attention.hpp"

#include <algorithm>
#include <cmath>

#include "core/parallel.hpp"

namespace normlab {

template <typename T>
void attention_forward(const AttentionShape& s, const T* qkv, T* o, T* probs) {
  const int64_t Tn = s.len;
  const int D = s.width;
  const int dh = D / s.heads;
  const int64_t row = 3 * D;
  const T scale = T(s.scale);
  parallel_for(s.batch * s.heads, [&](int64_t task) {
    const int64_t b = task / s.heads;
    const int h = static_cast<int>(task % s.heads);
    const T* base = qkv + b * Tn * row;
    T* P = probs + task * Tn * Tn;  // (T, T) for this (b, h)
    for (int64_t i = 0; i < Tn; ++i) {
      const T* q = base + i * row + h * dh;
      const int64_t jend = s.causal ? i + 1 : Tn;
      T* p = P + i * Tn;
      T max_logit = -INFINITY;
      for (int64_t j = 0; j < jend; ++j) {
        const T* k = base + j * row + D + h * dh;
        T dot = 0;
        for (int c = 0; c < dh; ++c) dot += q[c] * k[c];
        p[j] = dot * scale;
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
      T* out = o + (b * Tn + i) * D + h * dh;
      for (int c = 0; c < dh; ++c) out[c] = 0;
      for (int64_t j = 0; j < jend; ++j) {
        const T* v = base + j * row + 2 * D + h * dh;
        const T pj = p[j];
        for (int c = 0; c < dh; ++c) out[c] += pj * v[c];
      }
    }
  });
}

template <typename T>
void attention_backward(const AttentionShape& s, const T* qkv, const T* probs, const T* d_o,
                        T* dqkv) {
  const int64_t Tn = s.len;
  const int D = s.width;
  const int dh = D / s.heads;
  const int64_t row = 3 * D;
  const T scale = T(s.scale);
  parallel_for(s.batch * s.heads, [&](int64_t task) {
    const int64_t b = task / s.heads;
    const int h = static_cast<int>(task % s.heads);
    const T* base = qkv + b * Tn * row;
    T* dbase = dqkv + b * Tn * row;
    const T* P = probs + task * Tn * Tn;
    for (int64_t t = 0; t < Tn; ++t) {
      for (int part = 0; part < 3; ++part) {
        T* d = dbase + t * row + part * D + h * dh;
        for (int c = 0; c < dh; ++c) d[c] = 0;
      }
    }
    for (int64_t i = 0; i < Tn; ++i) {
      const int64_t jend = s.causal ? i + 1 : Tn;
      const T* p = P + i * Tn;
      const T* doi = d_o + (b * Tn + i) * D + h * dh;
      const T* q = base + i * row + h * dh;
      T* dq = dbase + i * row + h * dh;
      // ds_j = p_j (dp_j − Σ p dp); first pass: dp_j and the weighted sum.
      T weighted = 0;
      for (int64_t j = 0; j < jend; ++j) {
        const T* v = base + j * row + 2 * D + h * dh;
        T dp = 0;
        for (int c = 0; c < dh; ++c) dp += doi[c] * v[c];
        weighted += p[j] * dp;
      }
      for (int64_t j = 0; j < jend; ++j) {
        const T* k = base + j * row + D + h * dh;
        const T* v = base + j * row + 2 * D + h * dh;
        T* dk = dbase + j * row + D + h * dh;
        T* dv = dbase + j * row + 2 * D + h * dh;
        T dp = 0;
        for (int c = 0; c < dh; ++c) dp += doi[c] * v[c];
        const T pj = p[j];
        const T ds = pj * (dp - weighted) * scale;
        for (int c = 0; c < dh; ++c) {
          dv[c] += pj * doi[c];
          dq[c] += ds * k[c];
          dk[c] += ds * q[c];
        }
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
