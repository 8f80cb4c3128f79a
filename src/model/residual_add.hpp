// The residual add of a sublayer and its factors (docs/schemes.md, "The block"):
//   r = a ⊙ x + b ⊙ z,   or nGPT's interpolation r = x + |α| f ⊙ (z − x),
// with x the stream entering the sublayer (nGPT: its N_x(x)) and z its branch output, rows × D
// each; α the stored parameter and f its factor (ngpt_scales, model.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "normlab/placement.hpp"

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

// x, z, r: (rows, D); alpha: (D) or null. r = fa ⊙ x + fb ⊙ z, or x + |α| f ⊙ (z − x) when
// alpha is given, f = alpha_factor. r may be x (AttnRes adds a record to its block's partial sum
// in place).
template <typename T>
void residual_combine(const T* x, const T* z, const T* alpha, Factor<T> fa, Factor<T> fb, T* r,
                      int64_t rows, int D, T alpha_factor = T(1)) {
  for_row_shards(rows, [&](int64_t, int64_t n0, int64_t n1) {
    if (alpha == nullptr && fa.p == nullptr && fb.p == nullptr) {
      const T a = fa.constant, b = fb.constant;
      for (int64_t k = n0 * D; k < n1 * D; ++k) r[k] = a * x[k] + b * z[k];
      return;
    }
    if (alpha == nullptr) {
      for (int64_t n = n0; n < n1; ++n) {
        for (int d = 0; d < D; ++d) {
          const int64_t k = n * D + d;
          r[k] = fa.at(d) * x[k] + fb.at(d) * z[k];
        }
      }
      return;
    }
    for (int64_t n = n0; n < n1; ++n) {
      for (int d = 0; d < D; ++d) {
        const int64_t k = n * D + d;
        r[k] = x[k] + std::abs(alpha[d]) * alpha_factor * (z[k] - x[k]);
      }
    }
  });
}

}  // namespace normlab
