#include "core/kernels/attention_stream.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/kernels/alibi.hpp"
#include "core/kernels/block16.hpp"
#include "core/kernels/dot.hpp"
#include "core/parallel.hpp"
#include "core/scratch.hpp"

namespace normlab {
namespace {

constexpr int64_t kKeyBlock = 256;

// scores[u] = ⟨q, k_u⟩ · scale for the `count` keys at keys + u·row (dh values each). Sixteen
// keys at a time, their lane sums reduced together by sums_of_lanes16: bit for bit dot_lanes
// of each key (block16.hpp), in a fraction of the shuffles. NB > 0: dh = 16·NB, q held in
// registers; NB = 0: any dh.
template <int NB, typename T>
void key_scores(const T* q, const T* keys, int64_t row, int dh, int64_t count, T scale, T* scores) {
  Block16<T> qb[NB > 0 ? NB : 1];
  for (int w = 0; w < NB; ++w) qb[w] = load16(q + w * kBlock);
  auto lane_sums = [&](const T* k) {
    if constexpr (NB == 0) {
      return dot_lane_sums(q, k, dh);
    } else {  // dot_lane_sums's sums, lane c mod 16, in the same order
      Block16<T> lanes = {};
      for (int w = 0; w < NB; ++w) lanes += qb[w] * load16(k + w * kBlock);
      return lanes;
    }
  };
  int64_t u = 0;
  for (; u + kBlock <= count; u += kBlock) {
    Block16<T> lanes[kBlock];
    for (int64_t k = 0; k < kBlock; ++k) lanes[k] = lane_sums(keys + (u + k) * row);
    store16(scores + u, sums_of_lanes16<T>(lanes) * scale);
  }
  for (; u < count; ++u) scores[u] = sum_of_lanes<T>(lane_sums(keys + u * row)) * scale;
}

// The largest of s[0, count), NaN ignored as std::max(m, s_u) over u ignores it (a maximum is
// exact in any order; its sign of zero changes no exp below).
template <typename T>
T largest(const T* s, int64_t count) {
  Block16<T> lanes = Block16<T>{} - T(INFINITY);
  int64_t u = 0;
  for (; u + kBlock <= count; u += kBlock) {
    const Block16<T> v = load16(s + u);
    lanes = where_less(lanes, v, v, lanes);
  }
  T m = max_of_lanes<T>(lanes);
  for (; u < count; ++u) m = std::max(m, s[u]);
  return m;
}

// acc[c] ← acc[c]·rescale, then acc[c] += p_u · v_u[c] for u = 0 … count−1 in order, for each
// of the dh columns (the values at values + u·row). Columns are independent, so each block of
// 16 stays in a register across the keys; every column sees the same products and sums in the
// same order as a one-column loop. NB > 0: dh = 16·NB, all blocks at once; NB = 0: any dh.
template <int NB, typename T>
void accumulate_values(const T* p, const T* values, int64_t row, int64_t count, int dh, T rescale,
                       T* acc) {
  constexpr int kWide = NB > 0 ? NB : 4;  // blocks held at once
  int c = 0;
  for (; c + kWide * kBlock <= dh; c += kWide * kBlock) {
    Block16<T> a[kWide];
    for (int w = 0; w < kWide; ++w) a[w] = load16(acc + c + w * kBlock) * rescale;
    for (int64_t u = 0; u < count; ++u) {
      const T* v = values + u * row + c;
      for (int w = 0; w < kWide; ++w) a[w] += p[u] * load16(v + w * kBlock);
    }
    for (int w = 0; w < kWide; ++w) store16(acc + c + w * kBlock, a[w]);
  }
  for (; c + kBlock <= dh; c += kBlock) {
    Block16<T> a = load16(acc + c) * rescale;
    for (int64_t u = 0; u < count; ++u) a += p[u] * load16(values + u * row + c);
    store16(acc + c, a);
  }
  for (; c < dh; ++c) {
    T a = acc[c] * rescale;
    for (int64_t u = 0; u < count; ++u) a += p[u] * values[u * row + c];
    acc[c] = a;
  }
}

// f(std::integral_constant<int, NB>) with NB = dh / 16 for head widths 16, 32, …, 128, else
// NB = 0 (the loops for any width).
template <typename F>
void with_head_blocks(int dh, F&& f) {
  switch (dh % kBlock == 0 ? dh / kBlock : 0) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 5:
      return f(std::integral_constant<int, 5>{});
    case 6:
      return f(std::integral_constant<int, 6>{});
    case 7:
      return f(std::integral_constant<int, 7>{});
    case 8:
      return f(std::integral_constant<int, 8>{});
    default:
      return f(std::integral_constant<int, 0>{});
  }
}

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
    T* scores = buf;  // the block's scores, then their weights e^(s_j − m')
    T* acc = buf + kKeyBlock;
    std::fill(acc, acc + dh, T(0));
    T m = -INFINITY, l = 0;
    for (int64_t j0 = 0; j0 < jend; j0 += kKeyBlock) {
      const int64_t j1 = std::min(jend, j0 + kKeyBlock);
      const int64_t count = j1 - j0;
      if (relative == nullptr) {
        with_head_blocks(dh, [&](auto nb) {
          key_scores<nb()>(q, base + j0 * row + D, row, dh, count, scale, scores);
        });
      } else {
        for (int64_t j = j0; j < j1; ++j) {
          const T* k = base + j * row + D;
          const T raw =
              dot_lanes(q, k, dh) + relative_term<T>(*relative, Tn, D, h * dh, dh, q, k, i, j);
          scores[j - j0] = raw * scale;
        }
      }
      if (s.alibi) {
        for (int64_t j = j0; j < j1; ++j) scores[j - j0] += slope * T(alibi_bias(i, j, s.causal));
      }
      const T new_m = std::max(m, largest(scores, count));
      const T rescale = std::exp(m - new_m);  // 0 on the first block (m = −inf)
      // The weights first, then their sum in key order: the exp calls do not wait on the sum.
      for (int64_t u = 0; u < count; ++u) scores[u] = std::exp(scores[u] - new_m);
      l *= rescale;
      for (int64_t u = 0; u < count; ++u) l += scores[u];
      with_head_blocks(dh, [&](auto nb) {
        accumulate_values<nb()>(scores, base + j0 * row + 2 * D, row, count, dh, rescale, acc);
      });
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
