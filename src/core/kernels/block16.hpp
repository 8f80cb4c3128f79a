// Products of small matrices in blocks of 16 values (one AVX-512 register of floats), for
// kernels whose operands are too narrow for OpenBLAS to pay off (attention heads, linear layers
// of width ≤ 32). Buffers read in whole blocks are padded with zeros to a multiple of 16.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace normlab {

constexpr int64_t kBlock = 16;
inline int64_t pad16(int64_t n) {
  return (n + kBlock - 1) / kBlock * kBlock;
}

// A block of 16 values held as two 8-lane vectors (lo = lanes 0–7, hi = lanes 8–15): the
// float block of an AVX2 build without AVX-512. GCC 12 lowers a 64-byte vector on AVX2 piece by
// piece through the stack (a norm's backward ran at ~13 ns per value); two 32-byte vectors stay
// in ymm registers. Every operation is the same lane by lane, and the reductions below follow
// the same pairwise trees, so the bits are those of the one-vector block.
template <typename T>
struct Halves16 {
  typedef T Half __attribute__((vector_size(kBlock / 2 * sizeof(T))));
  Half lo, hi;
  T operator[](int64_t l) const { return l < kBlock / 2 ? lo[l] : hi[l - kBlock / 2]; }
  // Lane l for writing: a vector aliases its element type, and hi follows lo in memory.
  T& operator[](int64_t l) { return reinterpret_cast<T*>(this)[l]; }
};

#define NORMLAB_HALVES16_OPERATOR(op)                                               \
  template <typename T>                                                             \
  inline Halves16<T> operator op(const Halves16<T>& a, const Halves16<T>& b) {      \
    return {a.lo op b.lo, a.hi op b.hi};                                            \
  }                                                                                 \
  template <typename T>                                                             \
  inline Halves16<T> operator op(const Halves16<T>& a, std::type_identity_t<T> b) { \
    return {a.lo op b, a.hi op b};                                                  \
  }                                                                                 \
  template <typename T>                                                             \
  inline Halves16<T> operator op(std::type_identity_t<T> a, const Halves16<T>& b) { \
    return {a op b.lo, a op b.hi};                                                  \
  }                                                                                 \
  template <typename T>                                                             \
  inline Halves16<T>& operator op##=(Halves16<T>& a, const Halves16<T>& b) {        \
    a.lo op## = b.lo;                                                               \
    a.hi op## = b.hi;                                                               \
    return a;                                                                       \
  }                                                                                 \
  template <typename T>                                                             \
  inline Halves16<T>& operator op##=(Halves16<T>& a, std::type_identity_t<T> b) {   \
    a.lo op## = b;                                                                  \
    a.hi op## = b;                                                                  \
    return a;                                                                       \
  }
NORMLAB_HALVES16_OPERATOR(+)
NORMLAB_HALVES16_OPERATOR(-)
NORMLAB_HALVES16_OPERATOR(*)
NORMLAB_HALVES16_OPERATOR(/)
#undef NORMLAB_HALVES16_OPERATOR

template <typename T>
inline Halves16<T> operator-(const Halves16<T>& a) {
  return {-a.lo, -a.hi};
}

template <typename V>
inline constexpr bool is_halves16 = false;
template <typename T>
inline constexpr bool is_halves16<Halves16<T>> = true;

// One block of 16 values: a GCC vector (one AVX-512 register of floats), or Halves16 for float
// on AVX2 without AVX-512. The accumulators of rows_times_mat are written with it because
// GCC 12 does not vectorize a 2-D accumulator array along the right axis.
template <typename T>
struct Block16Of;
template <>
struct Block16Of<float> {
#if defined(__AVX2__) && !defined(__AVX512F__)
  typedef Halves16<float> type;
#else
  typedef float type __attribute__((vector_size(kBlock * sizeof(float))));
#endif
};
template <>
struct Block16Of<double> {
  typedef double type __attribute__((vector_size(kBlock * sizeof(double))));
};
template <typename T>
using Block16 = typename Block16Of<T>::type;

template <typename T>
inline Block16<T> load16(const T* p) {
  Block16<T> v;
  if constexpr (is_halves16<Block16<T>>) {
    std::memcpy(&v.lo, p, sizeof(v.lo));
    std::memcpy(&v.hi, p + kBlock / 2, sizeof(v.hi));
  } else {
    std::memcpy(&v, p, sizeof(v));
  }
  return v;
}

// The store of a whole block. As two halves on AVX2: GCC 12 copies a 64-byte struct through
// general registers and the stack, which made a head's gather in attention ~10% of a step.
template <typename T>
inline void store16(T* p, const Block16<T>& v) {
  if constexpr (is_halves16<Block16<T>>) {
    std::memcpy(p, &v.lo, sizeof(v.lo));
    std::memcpy(p + kBlock / 2, &v.hi, sizeof(v.hi));
  } else {
    std::memcpy(p, &v, sizeof(v));
  }
}

// The first n lanes of a block (all 16 when n ≥ 16), the others zero, and their store: rows
// whose length is not a multiple of 16 (a width of 15) end in such a partial block. For float
// these are masked loads and stores (no access beyond the n lanes): one with AVX-512, two
// 8-lane halves with AVX2 (a plain loop there would insert the 16 lanes one by one); otherwise
// plain loops (double serves the finite-difference checks, where speed is moot). Loads and
// stores are exact, so the bits are the same on every path.
#ifdef __AVX512F__
inline __mmask16 first_lanes_mask(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
}
#elif defined(__AVX2__)
// Lane l of the mask is all ones when l < n (the sign bit selects it in maskload/maskstore).
inline __m256i first_lanes_mask8(int64_t n) {
  const int32_t k = n <= 0 ? 0 : n >= 8 ? 8 : static_cast<int32_t>(n);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif

template <typename T>
inline Block16<T> load_first(const T* p, int64_t n) {
  Block16<T> v = {};
#ifdef __AVX512F__
  if constexpr (std::is_same_v<T, float>) {
    const __m512 m = _mm512_maskz_loadu_ps(first_lanes_mask(n), p);
    std::memcpy(&v, &m, sizeof(v));
    return v;
  }
#elif defined(__AVX2__)
  if constexpr (std::is_same_v<T, float>) {
    // Whole halves are plain loads and empty ones zeros: a masked load costs more on AMD's
    // cores, and a head of 8 features loads its second half empty.
    if (n < kBlock / 2) return {_mm256_maskload_ps(p, first_lanes_mask8(n)), _mm256_setzero_ps()};
    if (n == kBlock / 2) return {_mm256_loadu_ps(p), _mm256_setzero_ps()};
    if (n < kBlock) {
      return {_mm256_loadu_ps(p),
              _mm256_maskload_ps(p + kBlock / 2, first_lanes_mask8(n - kBlock / 2))};
    }
    return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + kBlock / 2)};
  }
#endif
  for (int64_t l = 0; l < kBlock && l < n; ++l) v[l] = p[l];
  return v;
}

template <typename T>
inline void store_first(T* p, int64_t n, const Block16<T>& v) {
#ifdef __AVX512F__
  if constexpr (std::is_same_v<T, float>) {
    __m512 m;
    std::memcpy(&m, &v, sizeof(m));
    _mm512_mask_storeu_ps(p, first_lanes_mask(n), m);
    return;
  }
#elif defined(__AVX2__)
  if constexpr (std::is_same_v<T, float>) {
    // Whole halves are plain stores: a masked store takes several times longer on AMD's cores.
    if (n >= kBlock / 2) {
      _mm256_storeu_ps(p, v.lo);
      if (n >= kBlock) {
        _mm256_storeu_ps(p + kBlock / 2, v.hi);
      } else {
        _mm256_maskstore_ps(p + kBlock / 2, first_lanes_mask8(n - kBlock / 2), v.hi);
      }
    } else {
      _mm256_maskstore_ps(p, first_lanes_mask8(n), v.lo);
    }
    return;
  }
#endif
  for (int64_t l = 0; l < kBlock && l < n; ++l) p[l] = v[l];
}

// a ⊙ b rounded to T, where a kernel's formula keeps a product apart from the addition after
// it. The build compiles with -ffp-contract=off (CMakeLists.txt), so no product of these
// kernels is fused: a block's multiply-add is a product rounded, then a sum rounded, in every
// build; the name says that this one must stay so.
template <typename T>
inline Block16<T> multiply_rounded(const Block16<T>& a, const Block16<T>& b) {
  return a * b;
}

// The scalar form.
template <typename T>
inline T multiply_rounded(T a, T b) {
  return a * b;
}

// a < b ? then : else, lane by lane (for a scalar, the plain conditional). With AVX-512 a
// compare of whole blocks is one instruction into a mask register; without, GCC 12 lowers a
// compare of 64-byte vectors lane by lane (16 scalar compares and blends), so the blocks are
// compared as two 32-byte halves (two vcmpps) and selected with bit operations. A select is
// exact: the same values either way.
inline float where_less(float a, float b, float then_value, float else_value) {
  return a < b ? then_value : else_value;
}
inline double where_less(double a, double b, double then_value, double else_value) {
  return a < b ? then_value : else_value;
}

template <typename T>
inline Block16<T> where_less_lanes(const Block16<T>& a, const Block16<T>& b,
                                   const Block16<T>& then_value, const Block16<T>& else_value) {
#ifdef __AVX512F__
  return a < b ? then_value : else_value;
#else
  if constexpr (is_halves16<Block16<T>>) {
    return {a.lo < b.lo ? then_value.lo : else_value.lo,
            a.hi < b.hi ? then_value.hi : else_value.hi};
  } else {
    typedef T Half __attribute__((vector_size(kBlock * sizeof(T) / 2)));
    using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    typedef Bits HalfMask __attribute__((vector_size(kBlock * sizeof(T) / 2)));
    typedef Bits Mask __attribute__((vector_size(kBlock * sizeof(T))));
    Half ha[2], hb[2];
    std::memcpy(ha, &a, sizeof(a));
    std::memcpy(hb, &b, sizeof(b));
    const HalfMask halves[2] = {ha[0] < hb[0], ha[1] < hb[1]};
    Mask m, t, e;
    std::memcpy(&m, halves, sizeof(m));
    std::memcpy(&t, &then_value, sizeof(t));
    std::memcpy(&e, &else_value, sizeof(e));
    const Mask chosen = (m & t) | (~m & e);
    Block16<T> out;
    std::memcpy(&out, &chosen, sizeof(out));
    return out;
  }
#endif
}

// The same on one 8-lane half (the exp and erf bodies of fast_math.hpp run per half).
inline Halves16<float>::Half where_less(Halves16<float>::Half a, Halves16<float>::Half b,
                                        Halves16<float>::Half then_value,
                                        Halves16<float>::Half else_value) {
  return a < b ? then_value : else_value;
}
inline Block16<float> where_less(const Block16<float>& a, const Block16<float>& b,
                                 const Block16<float>& then_value,
                                 const Block16<float>& else_value) {
  return where_less_lanes<float>(a, b, then_value, else_value);
}
inline Block16<double> where_less(const Block16<double>& a, const Block16<double>& b,
                                  const Block16<double>& then_value,
                                  const Block16<double>& else_value) {
  return where_less_lanes<double>(a, b, then_value, else_value);
}

// Σ of 8 lanes in the pairwise order l and l + 4, then l and l + 2, then 0 and 1 (by
// reference: a vector of 8 doubles is wider than an AVX2 register).
template <typename T, typename V8>
inline T sum_of_8_lanes(const V8& h8) {
  const auto h4 =
      __builtin_shufflevector(h8, h8, 0, 1, 2, 3) + __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
  const auto h2 = __builtin_shufflevector(h4, h4, 0, 1) + __builtin_shufflevector(h4, h4, 2, 3);
  return h2[0] + h2[1];
}

// Σ of the 16 lanes in a fixed pairwise order: lanes l and l + 8, then as sum_of_8_lanes.
// Written with whole-vector shuffles, it compiles to seven instructions.
template <typename T>
inline T sum_of_lanes(const Block16<T>& v) {
  if constexpr (is_halves16<Block16<T>>) {
    return sum_of_8_lanes<T>(v.lo + v.hi);
  } else {
    const auto h8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                    __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    return sum_of_8_lanes<T>(h8);
  }
}

// One level of sums_of_lanes16's tree, for halves of H lanes: out[i] holds, for each group of
// 2H lanes of v[2i] then of v[2i + 1], the first H lanes plus the next H (lane o of group g:
// element g·2H + o of the pair, plus element g·2H + o + H).
// For Halves16 the 16 lanes of the result are 8 from a (lo) then 8 from b (hi), each lane the
// same sum of a's (b's) lanes as above, read from the concatenation of its two halves.
template <int H, typename Half, size_t... L>
inline Half add_pairs_of(const Half& lo, const Half& hi, std::index_sequence<L...>) {
  return __builtin_shufflevector(lo, hi, (L / H * 2 * H + L % H)...) +
         __builtin_shufflevector(lo, hi, (L / H * 2 * H + L % H + H)...);
}

// For Halves16 the 16 lanes of the result are 8 from a (lo) then 8 from b (hi), each lane the
// same sum of a's (b's) lanes as above, read from the concatenation of its two halves.
template <int H, typename T, size_t... L>
inline Block16<T> add_halves(const Block16<T>& a, const Block16<T>& b, std::index_sequence<L...>) {
  if constexpr (is_halves16<Block16<T>>) {
    return {add_pairs_of<H>(a.lo, a.hi, std::make_index_sequence<kBlock / 2>{}),
            add_pairs_of<H>(b.lo, b.hi, std::make_index_sequence<kBlock / 2>{})};
  } else {
    return __builtin_shufflevector(a, b, (L / H * 2 * H + L % H)...) +
           __builtin_shufflevector(a, b, (L / H * 2 * H + L % H + H)...);
  }
}

template <int H, typename T>
inline void sum_level(const Block16<T>* v, Block16<T>* out, int n_out) {
  for (int i = 0; i < n_out; ++i) {
    out[i] = add_halves<H, T>(v[2 * i], v[2 * i + 1], std::make_index_sequence<kBlock>{});
  }
}

// The lane sums of 16 blocks at once: lane i of the result is sum_of_lanes(v[i]), bit for bit
// (every sum follows the same pairwise tree), with 15 two-block shuffles-and-adds in all instead
// of 7 instructions per block. Level 1 leaves [v0's 8 | v1's 8] per pair, level 2 [4 | 4 | 4 | 4],
// level 3 eight pairs, level 4 the sums.
template <typename T>
inline Block16<T> sums_of_lanes16(const Block16<T>* v) {
  Block16<T> h8[8], h4[4], h2[2], sums[1];
  sum_level<8, T>(v, h8, 8);
  sum_level<4, T>(h8, h4, 4);
  sum_level<2, T>(h4, h2, 2);
  sum_level<1, T>(h2, sums, 1);
  return sums[0];
}

// The largest of 8 lanes (exact in any order), in the tree of sum_of_8_lanes.
template <typename T, typename V8>
inline T max_of_8_lanes(const V8& h8) {
  const auto a4 = __builtin_shufflevector(h8, h8, 0, 1, 2, 3);
  const auto b4 = __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
  const auto h4 = a4 > b4 ? a4 : b4;
  const auto a2 = __builtin_shufflevector(h4, h4, 0, 1);
  const auto b2 = __builtin_shufflevector(h4, h4, 2, 3);
  const auto h2 = a2 > b2 ? a2 : b2;
  return h2[0] > h2[1] ? h2[0] : h2[1];
}

// The largest of the 16 lanes (exact in any order), in the same tree.
template <typename T>
inline T max_of_lanes(const Block16<T>& v) {
  if constexpr (is_halves16<Block16<T>>) {
    return max_of_8_lanes<T>(v.lo > v.hi ? v.lo : v.hi);
  } else {
    const auto a8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
    const auto b8 = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    const auto h8 = a8 > b8 ? a8 : b8;
    return max_of_8_lanes<T>(h8);
  }
}

// 0, 1, ..., 15: compared with a row's remaining length, the lanes of a block inside the row.
template <typename T>
inline Block16<T> lane_indices() {
  Block16<T> v;
  for (int l = 0; l < kBlock; ++l) v[l] = T(l);
  return v;
}

// acc[r][k] = Σ_{c in [c0, c1)} X(r, c) · m[c][k] for r < R and k < cols (a multiple of 16),
// X(r, c) = x[r·rs + c·cs], handed block by block to store(r, k0, acc[r][k0 .. k0 + 16)). The
// R rows are accumulated side by side, so R independent register chains hide the latency of
// the multiply-adds; each output still sums over c in ascending order, exactly as a one-row
// loop would.
template <int R, typename T, typename Store>
inline void rows_times_mat_each(const T* __restrict x, int64_t rs, int64_t cs, int64_t c0,
                                int64_t c1, const T* __restrict m, int64_t ld, int64_t cols,
                                Store&& store) {
  for (int64_t k0 = 0; k0 < cols; k0 += kBlock) {
    Block16<T> acc[R] = {};
    for (int64_t c = c0; c < c1; ++c) {
      const Block16<T> mc = load16(m + c * ld + k0);
      for (int r = 0; r < R; ++r) acc[r] += x[r * rs + c * cs] * mc;
    }
    for (int r = 0; r < R; ++r) store(r, k0, acc[r]);
  }
}

// The same sums with all NB blocks of the rows at once (cols = 16·NB): each value of X is
// broadcast once for NB blocks instead of once per block, so a row group of a narrow product
// (q|k|v at D = 15: NB = 3) is bound by its multiply-adds, not by its loads. Each output is
// still one chain of products and sums over c in ascending order, so the bits equal
// rows_times_mat_each's. The R·NB accumulators must fit in the 32 vector registers beside
// the NB blocks of m and the broadcast value: R·NB ≤ 24.
template <int R, int NB, typename T, typename Store>
inline void rows_times_blocks(const T* __restrict x, int64_t rs, int64_t cs, int64_t c0, int64_t c1,
                              const T* __restrict m, int64_t ld, Store&& store) {
  static_assert(R * NB <= 24, "the accumulators would not fit the vector registers");
  Block16<T> acc[R][NB] = {};
  for (int64_t c = c0; c < c1; ++c) {
    Block16<T> mc[NB];
    for (int b = 0; b < NB; ++b) mc[b] = load16(m + c * ld + b * kBlock);
    for (int r = 0; r < R; ++r) {
      const T xrc = x[r * rs + c * cs];
      for (int b = 0; b < NB; ++b) acc[r][b] += xrc * mc[b];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < NB; ++b) store(r, b * kBlock, acc[r][b]);
  }
}

// rows_times_blocks<R, nb> for a count nb in [1, NB] known at run time.
template <int R, int NB, typename T, typename Store>
inline void rows_times_first_blocks(int64_t nb, const T* __restrict x, int64_t rs, int64_t cs,
                                    int64_t c0, int64_t c1, const T* __restrict m, int64_t ld,
                                    Store&& store) {
  if (nb == NB) return rows_times_blocks<R, NB>(x, rs, cs, c0, c1, m, ld, store);
  if constexpr (NB > 1) rows_times_first_blocks<R, NB - 1>(nb, x, rs, cs, c0, c1, m, ld, store);
}

// How many blocks of R rows rows_times_mat multiplies in one pass. With AVX-512 a float block
// is one of 32 registers: the R·NB accumulators, the NB blocks of m and the broadcast value
// fit when R·NB + NB ≤ 31, and R = 4 rows one block at a time would keep only 4 chains of
// multiply-adds in flight, too few to hide their latency. On AVX2 a float block takes two of 16
// registers, which 4 rows of one block already fill with 8 chains; a double block (the
// finite-difference checks) takes two AVX-512 registers.
template <int R, typename T>
constexpr int blocks_per_pass() {
#ifdef __AVX512F__
  if constexpr (std::is_same_v<T, float>) return 31 / (R + 1);
#endif
  return 1;
}

// The same, written to out[r][k] (row stride ldo), whole blocks, blocks_per_pass at a time:
// each output is the same chain over c as rows_times_mat_each's, so the bits are too.
template <int R, typename T>
inline void rows_times_mat(const T* __restrict x, int64_t rs, int64_t cs, int64_t c0, int64_t c1,
                           const T* __restrict m, int64_t ld, int64_t cols, T* __restrict out,
                           int64_t ldo) {
  constexpr int NB = blocks_per_pass<R, T>();
  for (int64_t k0 = 0; k0 < cols; k0 += NB * kBlock) {
    const int64_t nb = std::min<int64_t>(NB, (cols - k0) / kBlock);
    rows_times_first_blocks<R, NB>(
        nb, x, rs, cs, c0, c1, m + k0, ld,
        [&](int r, int64_t k, const Block16<T>& v) { store16(out + r * ldo + k0 + k, v); });
  }
}

// Rows [r0, r1) in groups multiplied side by side: f(R, r) for a group of R rows starting at
// r (R a std::integral_constant), R = kMax while it fits, then halving down to 1.
template <int kMax, typename F>
inline void in_row_groups(int64_t r0, int64_t r1, F&& f) {
  int64_t r = r0;
  for (; r + kMax <= r1; r += kMax) f(std::integral_constant<int, kMax>{}, r);
  if constexpr (kMax > 1) in_row_groups<kMax / 2>(r, r1, f);
}

// rows_times_mat over `rows` rows in groups of at most kRows. With `from_group_start`, the sum
// of a group starting at row r runs over c in [r, c1) instead of [0, c1): for the causal key
// gradients, whose terms with c < r are all zero.
constexpr int kRows = 4;
template <typename T>
inline void rows_times_mat(int64_t rows, const T* x, int64_t rs, int64_t cs, bool from_group_start,
                           int64_t c1, const T* m, int64_t ld, int64_t cols, T* out, int64_t ldo) {
  in_row_groups<kRows>(0, rows, [&](auto group, int64_t r) {
    rows_times_mat<group()>(x + r * rs, rs, cs, from_group_start ? r : 0, c1, m, ld, cols,
                            out + r * ldo, ldo);
  });
}

}  // namespace normlab
