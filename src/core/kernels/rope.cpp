#include "core/kernels/rope.hpp"

#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "core/kernels/block16.hpp"
#include "core/parallel.hpp"

namespace normlab {
namespace {

// One pair (x0, x1) rotated by (c, s), s already negated for the inverse:
//   (x0, x1) → (x0 c − x1 s, x0 s + x1 c)
// written as fused multiply-adds so that the rounding does not depend on the compiler's choice
// of which product to fuse (these are the bits normlab has always produced). With the
// interleaved factors of a head, even = (c_0, s_0, c_1, s_1, …) and odd = (−s_0, c_0, −s_1,
// c_1, …), every feature j of the pair p = ⌊j/2⌋ is the same expression:
//   x'_j = fma(x_{2p}, even_j, x_{2p+1} · odd_j)
// (x1 · (−s) is −(x1 · s) exactly), which is what the vector path computes 16 features at once.
template <typename T>
void rotate_head_pairs(T* x, const T* even, const T* odd, int dh, T s_sign) {
  for (int j = 0; j < dh; j += 2) {
    const T x0 = x[j], x1 = x[j + 1];
    const T c = even[j], s = s_sign * even[j + 1];
    x[j] = std::fma(x0, c, -(x1 * s));
    x[j + 1] = std::fma(x0, s, x1 * c);
  }
}

#ifdef __AVX512F__
// 16 features of x (lanes beyond mask m untouched) rotated by the factors e and o of their
// lanes, as rotate_head_pairs: x'_j = fma(x_{2p}, e_j, x_{2p+1} · o_j).
void rotate_16(float* x, __mmask16 m, __m512 e, __m512 o) {
  const __m512 v = _mm512_maskz_loadu_ps(m, x);
  const __m512 x0 = _mm512_shuffle_ps(v, v, 0xA0);  // x_{2p} in both lanes of pair p
  const __m512 x1 = _mm512_shuffle_ps(v, v, 0xF5);  // x_{2p+1} in both lanes
  _mm512_mask_storeu_ps(x, m, _mm512_fmadd_ps(x0, e, _mm512_mul_ps(x1, o)));
}

// The factors of lanes [k0, k0 + 16) of a head's (even, odd) row, lanes past dh zero; for the
// inverse, s flips sign: even's odd lanes and odd's even lanes (a sign-bit flip, exact).
// With `repeat`, lane l holds feature l mod dh instead (dh dividing 16): every head of a q or k
// row in one vector step.
void load_factors(const float* even, const float* odd, int dh, int k0, bool inverse, bool repeat,
                  __m512& e, __m512& o) {
  const __m512i odd_lanes =
      _mm512_set_epi32(INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0,
                       INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0);
  const __m512i even_lanes = _mm512_srli_epi64(odd_lanes, 32);
  const __mmask16 m = first_lanes_mask(dh - k0);
  __m512 ev = _mm512_maskz_loadu_ps(m, even + k0);
  __m512 od = _mm512_maskz_loadu_ps(m, odd + k0);
  if (repeat) {
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i feature = _mm512_and_si512(lane, _mm512_set1_epi32(dh - 1));  // l mod dh
    ev = _mm512_permutexvar_ps(feature, ev);
    od = _mm512_permutexvar_ps(feature, od);
  }
  if (inverse) {
    ev = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(ev), odd_lanes));
    od = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(od), even_lanes));
  }
  e = ev;
  o = od;
}

// One head of float features, 16 (8 pairs) per step; the last step is masked when dh is not a
// multiple of 16. Pairs never straddle a step (steps start at even features).
void rotate_head_pairs_avx512(float* x, const float* even, const float* odd, int dh, bool inverse) {
  for (int k0 = 0; k0 < dh; k0 += kBlock) {
    __m512 e, o;
    load_factors(even, odd, dh, k0, inverse, false, e, o);
    rotate_16(x + k0, first_lanes_mask(dh - k0), e, o);
  }
}

// Every head of a q or k row of `width` features when dh divides 16 (2, 4, 8): 16 features of
// 16 / dh heads per step, each lane with its own feature's factors.
void rotate_row_small_heads_avx512(float* x, int width, const float* even, const float* odd, int dh,
                                   bool inverse) {
  __m512 e, o;
  load_factors(even, odd, dh, 0, inverse, true, e, o);
  for (int k0 = 0; k0 < width; k0 += kBlock) rotate_16(x + k0, first_lanes_mask(width - k0), e, o);
}
#endif

}  // namespace

template <typename T>
void prepare_rope_table(RopeTable<T>& table, int64_t len, int dh, double base, int64_t offset) {
  if (table.len == len && table.offset == offset && table.dh == dh && table.base == base) return;
  table.even.resize(len * dh);
  table.odd.resize(len * dh);
  T* even = table.even.data();
  T* odd = table.odd.data();
  for (int p = 0; p < dh / 2; ++p) {
    const double frequency = std::pow(base, -2.0 * p / dh);  // θ_p = t · base^(−2p/dh)
    for (int64_t i = 0; i < len; ++i) {
      const double theta = static_cast<double>(i + offset) * frequency;
      const T c = T(std::cos(theta)), s = T(std::sin(theta));
      even[i * dh + 2 * p] = c;
      even[i * dh + 2 * p + 1] = s;
      odd[i * dh + 2 * p] = -s;
      odd[i * dh + 2 * p + 1] = c;
    }
  }
  table.len = len;
  table.offset = offset;
  table.dh = dh;
  table.base = base;
}

template <typename T>
void rope_apply(T* qkv, QkvShape shape, const RopeTable<T>& table, Rotation rotation) {
  // Plain copies, not a structured binding: clang before 16 cannot capture one in a lambda.
  const int64_t batch = shape.batch, len = shape.len;
  const int width = shape.width, heads = shape.heads;
  const int dh = width / heads;
  if (table.len != len || table.dh != dh) {
    throw std::logic_error("rope_apply: the table was prepared for another shape");
  }
  const bool inverse = rotation == Rotation::inverse;
  const T* even = table.even.data();
  const T* odd = table.odd.data();
  for_row_shards(batch * len, [&](int64_t, int64_t n0, int64_t n1) {
    for (int64_t r = n0; r < n1; ++r) {
      const T* even_row = even + (r % len) * dh;
      const T* odd_row = odd + (r % len) * dh;
      for (int part = 0; part < 2; ++part) {  // q, then k
        T* x = qkv + r * 3 * width + part * width;
#ifdef __AVX512F__
        if constexpr (std::is_same_v<T, float>) {
          if (dh < kBlock && kBlock % dh == 0) {
            rotate_row_small_heads_avx512(x, width, even_row, odd_row, dh, inverse);
            continue;
          }
        }
#endif
        for (int h = 0; h < heads; ++h) {
#ifdef __AVX512F__
          if constexpr (std::is_same_v<T, float>) {
            rotate_head_pairs_avx512(x + h * dh, even_row, odd_row, dh, inverse);
            continue;
          }
#endif
          rotate_head_pairs(x + h * dh, even_row, odd_row, dh, inverse ? T(-1) : T(1));
        }
      }
    }
  });
}

template void prepare_rope_table<float>(RopeTable<float>&, int64_t, int, double, int64_t);
template void prepare_rope_table<double>(RopeTable<double>&, int64_t, int, double, int64_t);
template void rope_apply<float>(float*, QkvShape, const RopeTable<float>&, Rotation);
template void rope_apply<double>(double*, QkvShape, const RopeTable<double>&, Rotation);

}  // namespace normlab
