#include "core/kernels/attention_stream.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/alibi.hpp"
#include "core/kernels/dot.hpp"
#include "core/parallel.hpp"
#include "core/scratch.hpp"

namespace normlab {
namespace {

constexpr int64_t kKeyBlock = 256;

}  // namespace

template <typename T>
void attention_stream(const AttentionShape& s, const T* qkv, const int64_t* rows, int64_t R, T* o,
                      const RelativeLogits<T>* relative) {
  const int64_t Tn = s.len;
  const int D = s.width;
  const int dh = D / s.heads;
  const int64_t row = 3 * D;
  const T scale = T(s.scale);
  parallel_for(R * s.heads, [&](int64_t task) {
    const int64_t r = task / s.heads;
    const int h = static_cast<int>(task % s.heads);
    const int64_t n = rows[r];
    const int64_t b = n / Tn, i = n % Tn;
    const T* base = qkv + b * Tn * row + h * dh;
    const T* q = base + i * row;
    const int64_t jend = s.causal ? i + 1 : Tn;
    const T slope = s.alibi ? T(alibi_slope(h, s.heads)) : T(0);
    T* buf = scratch<T>(ScratchUse::attention_stream_block, kKeyBlock + dh);
    T* scores = buf;
    T* acc = buf + kKeyBlock;
    std::fill(acc, acc + dh, T(0));
    T m = -INFINITY, l = 0;
    for (int64_t j0 = 0; j0 < jend; j0 += kKeyBlock) {
      const int64_t j1 = std::min(jend, j0 + kKeyBlock);
      T block_max = -INFINITY;
      for (int64_t j = j0; j < j1; ++j) {
        const T* k = base + j * row + D;
        T raw = dot_lanes(q, k, dh);
        if (relative != nullptr) raw += relative_term<T>(*relative, Tn, D, h * dh, dh, q, k, i, j);
        scores[j - j0] = raw * scale;
        if (s.alibi) scores[j - j0] += slope * T(alibi_bias(i, j, s.causal));
        block_max = std::max(block_max, scores[j - j0]);
      }
      const T new_m = std::max(m, block_max);
      const T rescale = std::exp(m - new_m);  // 0 on the first block (m = −inf)
      l *= rescale;
      for (int c = 0; c < dh; ++c) acc[c] *= rescale;
      for (int64_t j = j0; j < j1; ++j) {
        const T p = std::exp(scores[j - j0] - new_m);
        l += p;
        const T* v = base + j * row + 2 * D;
        for (int c = 0; c < dh; ++c) acc[c] += p * v[c];
      }
      m = new_m;
    }
    T* out = o + r * D + h * dh;
    const T inv = T(1) / l;
    for (int c = 0; c < dh; ++c) out[c] = acc[c] * inv;
  });
}

template void attention_stream<float>(const AttentionShape&, const float*, const int64_t*, int64_t,
                                      float*, const RelativeLogits<float>*);
template void attention_stream<double>(const AttentionShape&, const double*, const int64_t*,
                                       int64_t, double*, const RelativeLogits<double>*);

}  // namespace normlab
