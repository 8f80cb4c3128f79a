// Dropout (Srivastava et al. 2014), inverted: y = x ⊙ m / (1 − p), each m ∈ {0, 1} zero with
// probability p, the expectation of y that of x. Backward: dx = dy ⊙ m / (1 − p), the same
// operation.
//
// The mask is a function of (key, site, index) alone, a counter-based hash (SplitMix64's
// finalizer, Steele, Lea & Flood 2014):
//   h = mix(key + site · 0x9E3779B97F4A7C15 + index · 0xD1B54A32D192ED03)   (mod 2^64)
//   u = (h >> 11) · 2^−53 ∈ [0, 1),   m = 0 iff u < p
// so it is the same for any thread count, recomputed by the backward instead of stored, and
// reproduced by the twin (python/normlab/twin.py, dropout_mask). `site` tells apart the places
// of one step: 0 the embedding stream, i + 1 sublayer i's output, S + 1 + i the attention
// probabilities of sublayer i of S (src/model/model.cpp);
// `index` the element of (N, D).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/parallel.hpp"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>
#endif

namespace normlab {

constexpr uint64_t kDropoutSiteStep = 0x9E3779B97F4A7C15ULL;
constexpr uint64_t kDropoutIndexStep = 0xD1B54A32D192ED03ULL;

// SplitMix64's finalizer, mix(x) above, on one uint64_t or on a GCC vector of them, lane by
// lane (dropout_keeps16).
template <typename U>
inline U splitmix64_mix(U x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

inline uint64_t dropout_hash(uint64_t key, uint64_t site, uint64_t index) {
  return splitmix64_mix(key + site * kDropoutSiteStep + index * kDropoutIndexStep);
}

// u ≥ p in integers: u = m · 2^−53 with m = h >> 11 an integer below 2^53, and p · 2^53 is
// exact (a power-of-two scaling), so u ≥ p iff m ≥ ⌈p · 2^53⌉. The same decisions as the
// floating-point test, in 64-bit integer lanes that vectorize.
inline uint64_t dropout_threshold(double p) {
  return static_cast<uint64_t>(std::ceil(p * 0x1.0p53));
}

inline bool dropout_keeps(uint64_t key, uint64_t site, uint64_t index, double p) {
  return (dropout_hash(key, site, index) >> 11) >= dropout_threshold(p);
}

// The key of training step `step` (0-based) of a run of seed `seed`: a function of the two
// alone, so a resumed run draws the masks an uninterrupted one drew.
inline uint64_t dropout_step_key(uint64_t seed, int64_t step) {
  constexpr uint64_t kDropSite = 0x64726f70;  // "drop": apart from the sites of one step
  return dropout_hash(seed, kDropSite, static_cast<uint64_t>(step));
}

#if defined(__AVX512F__) && defined(__AVX512DQ__)
// Which of elements first .. first + 15 of `site` are kept, bit l for element first + l: the
// hash above in 8 lanes of 64 bits per register (splitmix64_mix in vpmullq). GCC vectorizes the
// scalar loop 256 bits wide on these CPUs (its tuning), with twice the instructions per hash.
// Integer arithmetic modulo 2^64, so the decisions are the scalar ones.
inline __mmask16 dropout_keeps16(uint64_t key, uint64_t site, uint64_t first, uint64_t threshold) {
  typedef uint64_t U64x8 __attribute__((vector_size(64)));
  const uint64_t base = key + site * kDropoutSiteStep + first * kDropoutIndexStep;
  const U64x8 lanes = {0, 1, 2, 3, 4, 5, 6, 7};
  const U64x8 x0 = base + lanes * kDropoutIndexStep;
  const U64x8 x1 = x0 + 8 * kDropoutIndexStep;
  const __m512i m = _mm512_set1_epi64(static_cast<int64_t>(threshold));
  const __mmask8 k0 = _mm512_cmpge_epu64_mask(__m512i(splitmix64_mix(x0) >> 11), m);
  const __mmask8 k1 = _mm512_cmpge_epu64_mask(__m512i(splitmix64_mix(x1) >> 11), m);
  return static_cast<__mmask16>(k0 | (static_cast<unsigned>(k1) << 8));
}
#endif

// out[k] = in[k] ⊙ m_k / (1 − p) for k in [begin, end); in may equal out. A dropped element is
// +0 whatever in[k] holds: the product's bits ANDed with an all-ones or all-zeros mask, integer
// lanes with no branch, which the compiler vectorizes on AVX2 (a select between a float product
// and 0 it leaves scalar there); for float with AVX-512, 16 elements at a time by
// dropout_keeps16, a dropped lane's +0 by a zeroing masked move.
template <typename T>
void dropout_range(const T* in, T* out, int64_t begin, int64_t end, T keep_scale,
                   uint64_t threshold, uint64_t key, uint64_t site) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  int64_t k = begin;
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  if constexpr (std::is_same_v<T, float>) {
    const __m512 scale16 = _mm512_set1_ps(keep_scale);
    for (; k + 16 <= end; k += 16) {
      const __mmask16 keeps = dropout_keeps16(key, site, static_cast<uint64_t>(k), threshold);
      const __m512 kept = _mm512_mul_ps(_mm512_loadu_ps(in + k), scale16);
      _mm512_storeu_ps(out + k, _mm512_maskz_mov_ps(keeps, kept));
    }
  }
#endif
  for (; k < end; ++k) {
    const Bits kept = std::bit_cast<Bits>(in[k] * keep_scale);
    const bool keeps = (dropout_hash(key, site, static_cast<uint64_t>(k)) >> 11) >= threshold;
    out[k] = std::bit_cast<T>(kept & (keeps ? ~Bits(0) : Bits(0)));
  }
}

// out[j] = in[j] · f_j for j in [0, n), f_j = keep_scale where element first + j of `site` is
// kept and +0 where it is dropped: a product even for a dropped element (so 0 · NaN is NaN and
// a negative value gives −0), the attention's dropout of its probabilities and their gradients
// (AttentionDropout). f_j is keep_scale's bits ANDed with the mask, so the loop vectorizes as
// dropout_range does (for float with AVX-512, 16 elements at a time by dropout_keeps16); in may
// equal out.
template <typename T>
void dropout_scale_row(const T* in, T* out, int64_t n, uint64_t first, T keep_scale,
                       uint64_t threshold, uint64_t key, uint64_t site) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const Bits scale = std::bit_cast<Bits>(keep_scale);
  int64_t j = 0;
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  if constexpr (std::is_same_v<T, float>) {
    const __m512 scale16 = _mm512_set1_ps(keep_scale);
    for (; j + 16 <= n; j += 16) {
      const __mmask16 keeps =
          dropout_keeps16(key, site, first + static_cast<uint64_t>(j), threshold);
      const __m512 f = _mm512_maskz_mov_ps(keeps, scale16);  // keep_scale or +0
      _mm512_storeu_ps(out + j, _mm512_mul_ps(_mm512_loadu_ps(in + j), f));
    }
  }
#endif
  for (; j < n; ++j) {
    const bool keeps =
        (dropout_hash(key, site, first + static_cast<uint64_t>(j)) >> 11) >= threshold;
    out[j] = in[j] * std::bit_cast<T>(scale & (keeps ? ~Bits(0) : Bits(0)));
  }
}

// out (n) = in ⊙ m / (1 − p) for elements 0 .. n − 1 of `site`; in may equal out.
template <typename T>
void dropout_apply(const T* in, T* out, int64_t n, double p, uint64_t key, uint64_t site) {
  constexpr int64_t kChunk = 4096;
  const T keep_scale = T(1.0 / (1.0 - p));
  const uint64_t threshold = dropout_threshold(p);
  parallel_for((n + kChunk - 1) / kChunk, [&](int64_t chunk) {
    dropout_range(in, out, chunk * kChunk, std::min(n, (chunk + 1) * kChunk), keep_scale, threshold,
                  key, site);
  });
}

}  // namespace normlab
