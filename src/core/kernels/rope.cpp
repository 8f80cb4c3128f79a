#include "core/kernels/rope.hpp"

#include <cmath>

#include "core/parallel.hpp"

namespace normlab {

template <typename T>
void rope_apply(T* qkv, int64_t batch, int64_t len, int width, int heads, double base, bool inverse,
                int64_t offset) {
  const int dh = width / heads;
  const int pairs = dh / 2;
  const int64_t rows = batch * len;
  for_row_shards(rows, [&](int64_t s, int64_t n0, int64_t n1) {
    for (int64_t r = n0; r < n1; ++r) {
      const double t = static_cast<double>(r % len + offset);
      for (int p = 0; p < pairs; ++p) {
        const double theta = t * std::pow(base, -2.0 * p / dh);
        const T c = T(std::cos(theta));
        const T sn = T(inverse ? -std::sin(theta) : std::sin(theta));
        for (int part = 0; part < 2; ++part) {  // q, then k
          T* x = qkv + r * 3 * width + part * width;
          for (int h = 0; h < heads; ++h) {
            T* pair = x + h * dh + 2 * p;
            const T x0 = pair[0], x1 = pair[1];
            pair[0] = x0 * c - x1 * sn;
            pair[1] = x0 * sn + x1 * c;
          }
        }
      }
    }
  });
}

template void rope_apply<float>(float*, int64_t, int64_t, int, int, double, bool, int64_t);
template void rope_apply<double>(double*, int64_t, int64_t, int, int, double, bool, int64_t);

}  // namespace normlab
