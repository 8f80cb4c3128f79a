// Sinusoidal positions (Vaswani et al. 2017):
//   PE[t, 2i] = sin(p_t / 10000^(2i/D)),  PE[t, 2i+1] = cos(p_t / 10000^(2i/D)),
// p_t = t; counted from the end, p_t = T − t (T, T − 1, …, 1: Delétang et al. 2023's encoder,
// models/positional_encodings.py, sinusoid_position_encoding with causal=True).
#pragma once

#include <cmath>
#include <cstdint>

namespace normlab {

// out is (T, D), T = len.
template <typename T>
void fill_sinusoid(int64_t len, int D, T* out, bool from_end = false) {
  for (int64_t t = 0; t < len; ++t) {
    const double p = static_cast<double>(from_end ? len - t : t);
    for (int d = 0; d < D; ++d) {
      const double freq = std::pow(10000.0, -static_cast<double>(d - d % 2) / D);
      out[t * D + d] = T(d % 2 == 0 ? std::sin(p * freq) : std::cos(p * freq));
    }
  }
}

}  // namespace normlab
