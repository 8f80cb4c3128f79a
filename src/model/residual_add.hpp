// The residual add of a sublayer and its factors (docs/schemes.md, "The block"):
//   r = a ⊙ x + b ⊙ z   (residual_add),   or nGPT's r = x + |α| f ⊙ (z − x)   (ngpt_interpolate),
// with x the stream entering the sublayer (nGPT: its N_x(x)) and z its branch output, rows × D
// each; α the stored parameter and f its factor (ngpt_scales, model.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "normlab/model/placement.hpp"

namespace normlab {

// A factor of the residual add: a constant, or a learnable parameter read as p[d · stride]
// (a vector: stride 1; a scalar: stride 0).
template <typename T>
struct Factor {
  T constant = T(1);
  const T* p = nullptr;
  int stride = 0;
  T at(int d) const { return p != nullptr ? p[d * stride] : constant; }
};

// The factor of a resolved scale: its constant, or the learnable parameter at `offset`.
template <typename T>
Factor<T> factor(const ScaleSpec& spec, const std::vector<T>& params, int64_t offset) {
  if (offset < 0) return Factor<T>{.constant = T(spec.value)};
  return Factor<T>{.p = params.data() + offset, .stride = spec.kind == ScaleKind::vector ? 1 : 0};
}

// out = s · in over n values (out may be in).
template <typename T>
void scale_rows(const T* in, T s, T* out, int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] = s * in[k];
}

// x, z, r: (rows, D). r = fa ⊙ x + fb ⊙ z, the factors 1 unless given. r may be x (AttnRes adds
// a record to its block's partial sum in place).
template <typename T>
void residual_add(const T* x, const T* z, T* r, int64_t rows, int D, Factor<T> fa = {},
                  Factor<T> fb = {}) {
  for_row_shards(rows, [&](int64_t, int64_t n0, int64_t n1) {
    if (fa.p == nullptr && fb.p == nullptr) {
      const T a = fa.constant, b = fb.constant;
      for (int64_t k = n0 * D; k < n1 * D; ++k) r[k] = a * x[k] + b * z[k];
      return;
    }
    for (int64_t n = n0; n < n1; ++n) {
      for (int d = 0; d < D; ++d) {
        const int64_t k = n * D + d;
        r[k] = fa.at(d) * x[k] + fb.at(d) * z[k];
      }
    }
  });
}

// nGPT's interpolation (docs/schemes.md, "nGPT"): x, z, r: (rows, D); alpha: (D), the stored
// parameter, read through its factor f (ngpt_scales, model.hpp). r = x + |α| f ⊙ (z − x).
template <typename T>
void ngpt_interpolate(const T* x, const T* z, const T* alpha, T alpha_factor, T* r, int64_t rows,
                      int D) {
  for_row_shards(rows, [&](int64_t, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      for (int d = 0; d < D; ++d) {
        const int64_t k = n * D + d;
        r[k] = x[k] + std::abs(alpha[d]) * alpha_factor * (z[k] - x[k]);
      }
    }
  });
}

}  // namespace normlab
