// attention_stream (attention_stream.hpp) against the online softmax written one key and one
// column at a time, in float and double: the outputs must be the same bits. The kernel reduces
// sixteen keys' dot products together, keeps columns in registers across keys and sums the
// weights after their exps; every query's products, sums, maxima and exps are the reference's,
// in the reference's order, so any difference is a bug (no tolerance). Cases cross the
// 256-key blocks, the 16-key groups and the 16-column blocks (head widths 8, 24, 32 … 144),
// with ALiBi, causal and bidirectional, and a subset of rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/kernels/alibi.hpp"
#include "core/kernels/attention_stream.hpp"
#include "core/kernels/dot.hpp"
#include "normlab/base/rng.hpp"

namespace normlab {
namespace {

// The online softmax of attention_stream.hpp's header, one key at a time: per block of 256
// keys, the scores (dot_lanes · scale, plus ALiBi's bias), their running maximum, the rescale
// of l and of each column, then per key in order p = e^(s − m'), l += p, acc[c] += p · v[c].
template <typename T>
std::vector<T> reference(const AttentionShape& s, const std::vector<T>& qkv,
                         const std::vector<int64_t>& rows) {
  const int64_t Tn = s.len, row = 3 * s.width;
  const int dh = s.width / s.heads;
  std::vector<T> o(rows.size() * s.width);
  std::vector<T> scores(256), acc(dh);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int h = 0; h < s.heads; ++h) {
      const int64_t b = rows[r] / Tn, i = rows[r] % Tn;
      const T* base = qkv.data() + b * Tn * row + h * dh;
      const T* q = base + i * row;
      const int64_t jend = s.causal ? i + 1 : Tn;
      std::fill(acc.begin(), acc.end(), T(0));
      T m = -INFINITY, l = 0;
      for (int64_t j0 = 0; j0 < jend; j0 += 256) {
        const int64_t j1 = std::min(jend, j0 + 256);
        T block_max = -INFINITY;
        for (int64_t j = j0; j < j1; ++j) {
          scores[j - j0] = dot_lanes(q, base + j * row + s.width, dh) * T(s.scale);
          if (s.alibi) {
            scores[j - j0] += T(alibi_slope(h, s.heads)) * T(alibi_bias(i, j, s.causal));
          }
          block_max = std::max(block_max, scores[j - j0]);
        }
        const T new_m = std::max(m, block_max);
        const T rescale = std::exp(m - new_m);
        l *= rescale;
        for (int c = 0; c < dh; ++c) acc[c] *= rescale;
        for (int64_t j = j0; j < j1; ++j) {
          const T p = std::exp(scores[j - j0] - new_m);
          l += p;
          const T* v = base + j * row + 2 * s.width;
          for (int c = 0; c < dh; ++c) acc[c] += p * v[c];
        }
        m = new_m;
      }
      for (int c = 0; c < dh; ++c) o[r * s.width + h * dh + c] = acc[c] * (T(1) / l);
    }
  }
  return o;
}

struct StreamCase {
  int64_t batch, len;
  int width, heads;
  bool causal, alibi;
  bool every_third_row;  // rows 0, 3, 6, … instead of all
};

template <typename T>
void expect_same_bits(const StreamCase& c, uint64_t seed) {
  const AttentionShape s{.batch = c.batch,
                         .len = c.len,
                         .width = c.width,
                         .heads = c.heads,
                         .causal = c.causal,
                         .scale = 1.0 / std::sqrt(double(c.width / c.heads)),
                         .alibi = c.alibi};
  Rng rng(seed);
  std::vector<T> qkv(c.batch * c.len * 3 * c.width);
  for (T& x : qkv) x = T(2.0 * rng.normal());  // wide scores: the maxima move between blocks
  std::vector<int64_t> rows;
  for (int64_t n = 0; n < c.batch * c.len; n += c.every_third_row ? 3 : 1) rows.push_back(n);
  std::vector<T> o(rows.size() * c.width);
  attention_stream(s, qkv.data(), rows.data(), static_cast<int64_t>(rows.size()), o.data());
  const std::vector<T> want = reference(s, qkv, rows);
  const std::string name = "T" + std::to_string(c.len) + " D" + std::to_string(c.width) + " H" +
                           std::to_string(c.heads) + (c.causal ? " causal" : "") +
                           (c.alibi ? " alibi" : "");
  for (size_t k = 0; k < o.size(); ++k) {
    ASSERT_EQ(std::memcmp(&o[k], &want[k], sizeof(T)), 0)
        << name << ": output " << k << " is " << o[k] << ", the reference's " << want[k];
  }
}

const StreamCase kCases[] = {
    {2, 5, 8, 1, true, false, false},     // head width 8: the loops for any width
    {1, 70, 64, 2, true, false, false},   // 32: two blocks
    {1, 40, 48, 2, true, false, false},   // 24: one block of 16 and a tail of 8
    {1, 300, 64, 1, true, false, true},   // 64: four blocks; 256-key blocks crossed
    {2, 530, 64, 1, false, false, true},  // bidirectional, three key blocks
    {1, 270, 160, 2, true, true, true},   // 80: five blocks; ALiBi
    {1, 33, 144, 1, false, true, false},  // 144: nine blocks, the loops for any width
    {1, 17, 128, 1, true, false, false},  // 128: eight blocks; one group of 16 keys and one
};

TEST(AttentionStream, FloatIsTheOneKeyAtATimeOrderBitForBit) {
  uint64_t seed = 1;
  for (const StreamCase& c : kCases) expect_same_bits<float>(c, seed++);
}

TEST(AttentionStream, DoubleIsTheOneKeyAtATimeOrderBitForBit) {
  uint64_t seed = 100;
  for (const StreamCase& c : kCases) expect_same_bits<double>(c, seed++);
}

}  // namespace
}  // namespace normlab
