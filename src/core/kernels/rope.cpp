#include "core/kernels/rope.hpp"

#include <cmath>

#include "core/parallel.hpp"
#include "core/scratch.hpp"

namespace normlab {

template <typename T>
void rope_apply(T* qkv, int64_t batch, int64_t len, int width, int heads, double base, bool inverse,
                int64_t offset) {
  const int dh = width / heads;
  const int pairs = dh / 2;
  const int64_t rows = batch * len;
  // cos θ and sin θ of every (position, pair), (T, pairs) each: a position's angles are the
  // same in every sequence of the batch, so they are computed once per call, not per row, and
  // kept for the next call of the same shape (every layer's forward and backward).
  struct TableKey {
    int64_t len = -1, offset = 0;
    int dh = 0;
    double base = 0;
    bool operator==(const TableKey&) const = default;
  };
  thread_local TableKey held;
  const TableKey key{len, offset, dh, base};
  T* cos_table = scratch<T>(ScratchUse::rope_cos, len * pairs);
  T* sin_table = scratch<T>(ScratchUse::rope_sin, len * pairs);
  if (!(held == key)) {
    for (int p = 0; p < pairs; ++p) {
      const double frequency = std::pow(base, -2.0 * p / dh);  // θ_p = t · base^(−2p/dh)
      for (int64_t i = 0; i < len; ++i) {
        const double theta = static_cast<double>(i + offset) * frequency;
        cos_table[i * pairs + p] = T(std::cos(theta));
        sin_table[i * pairs + p] = T(std::sin(theta));
      }
    }
    held = key;
  }
  for_row_shards(rows, [&](int64_t, int64_t n0, int64_t n1) {
    for (int64_t r = n0; r < n1; ++r) {
      const T* c_row = cos_table + (r % len) * pairs;
      const T* s_row = sin_table + (r % len) * pairs;
      for (int p = 0; p < pairs; ++p) {
        const T c = c_row[p], sn = inverse ? -s_row[p] : s_row[p];
        for (int part = 0; part < 2; ++part) {  // q, then k
          T* x = qkv + r * 3 * width + part * width;
          for (int h = 0; h < heads; ++h) {
            T* pair = x + h * dh + 2 * p;
            const T x0 = pair[0], x1 = pair[1];
            // Written as fused multiply-adds so that the rounding does not depend on the
            // compiler's choice of which product to fuse (these are the bits normlab has
            // always produced).
            pair[0] = std::fma(x0, c, -(x1 * sn));
            pair[1] = std::fma(x0, sn, x1 * c);
          }
        }
      }
    }
  });
}

template void rope_apply<float>(float*, int64_t, int64_t, int, int, double, bool, int64_t);
template void rope_apply<double>(double*, int64_t, int64_t, int, int, double, bool, int64_t);

}  // namespace normlab
