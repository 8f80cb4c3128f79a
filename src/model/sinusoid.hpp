// Sinusoidal positions (Vaswani et al. 2017):
//   PE[t, 2i] = sin(t / 10000^(2i/D)),  PE[t, 2i+1] = cos(t / 10000^(2i/D)).
#pragma once

#include <cmath>
#include <cstdint>

namespace normlab {

// out is (T, D), T = len.
template <typename T>
void fill_sinusoid(int64_t len, int D, T* out) {
  for (int64_t t = 0; t < len; ++t) {
    for (int d = 0; d < D; ++d) {
      const double freq = std::pow(10000.0, -static_cast<double>(d - d % 2) / D);
      out[t * D + d] = T(d % 2 == 0 ? std::sin(t * freq) : std::cos(t * freq));
    }
  }
}

}  // namespace normlab
