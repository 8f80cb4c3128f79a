// The register tile of normlab's matrix products (gemm.cpp): a block of kRows × kCols values
// of C held in vector registers while one packed panel of A and one of B stream through.
//
//   a       (kc, kRows): op(A)'s tile rows, value (k, r) at a[k · k_step + r · r_step]: a
//                        packed panel (k_step kRows, r_step 1), or op(A) where it lies, rows
//                        lda apart (1, lda) or transposed (lda, 1)
//   b_panel (kc, kCols): row k of op(B)'s tile columns, kCols values per k
//   c       (kRows, kCols), rows ldc apart
//
// Every value of C is one chain of fused multiply-adds over k in ascending order,
//   c_ij ← fma(a_ik, b_kj, c_ij)   for k = 0, 1, …, kc − 1,
// starting from C's value or from +0. A lane of a vector register computes the same chain as a
// scalar std::fma loop would, so the bits do not depend on the vector width: the AVX-512, AVX2
// and scalar tiles below give identical results (docs/design.md principle 8), and so do the
// different tile sizes and the cache blocking of gemm.cpp.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

namespace normlab {

// One vector register of T and the four operations the tile needs. The multiply-add is the
// explicit fused instruction, never left to the compiler's contraction.
template <typename T>
struct Lanes;

#if defined(__AVX512F__)
template <>
struct Lanes<float> {
  using V = __m512;
  static constexpr int kWidth = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V broadcast(float x) { return _mm512_set1_ps(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V zero() { return _mm512_setzero_ps(); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
};
template <>
struct Lanes<double> {
  using V = __m512d;
  static constexpr int kWidth = 8;
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V broadcast(double x) { return _mm512_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V zero() { return _mm512_setzero_pd(); }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
};
constexpr const char* kGemmTileIsa = "AVX-512";
#elif defined(__AVX2__) && defined(__FMA__)
template <>
struct Lanes<float> {
  using V = __m256;
  static constexpr int kWidth = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V broadcast(float x) { return _mm256_set1_ps(x); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V zero() { return _mm256_setzero_ps(); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
};
template <>
struct Lanes<double> {
  using V = __m256d;
  static constexpr int kWidth = 4;
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V broadcast(double x) { return _mm256_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V zero() { return _mm256_setzero_pd(); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
};
constexpr const char* kGemmTileIsa = "AVX2+FMA";
#else
// No vector FMA at compile time: one lane, std::fma (correctly rounded in software where the
// CPU has no FMA instruction), slow but the same bits as the vector tiles.
template <typename T>
struct Lanes {
  using V = T;
  static constexpr int kWidth = 1;
  static V load(const T* p) { return *p; }
  static V broadcast(T x) { return x; }
  static V fma(V a, V b, V c) { return std::fma(a, b, c); }
  static V zero() { return T(0); }
  static void store(T* p, V v) { *p = v; }
};
constexpr const char* kGemmTileIsa = "scalar";
#endif

// The tile's shape per element type: kRows rows by kVectors registers of columns, kRows ·
// kVectors accumulators. With AVX2 (16 registers): 6 × 2 accumulators, two of B and one
// broadcast, the classic 6 × 16 float tile; with AVX-512 (32 registers): 8 × 2 accumulators,
// enough independent chains to keep two FMA units busy at a latency of 4.
template <typename T>
struct GemmTile {
  using L = Lanes<T>;
  using V = typename L::V;
#if defined(__AVX512F__)
  static constexpr int kRows = 8;
  static constexpr int kVectors = 2;
#elif defined(__AVX2__) && defined(__FMA__)
  static constexpr int kRows = 6;
  static constexpr int kVectors = 2;
#else
  static constexpr int kRows = 4;
  static constexpr int kVectors = 4;
#endif
  static constexpr int kCols = kVectors * L::kWidth;

  // c (kRows, kCols) ← the chains above over kc values of k, from c's values (from_zero false)
  // or from +0 (from_zero true; c is then only written).
  static void multiply(int64_t kc, const T* __restrict a, int64_t k_step, int64_t r_step,
                       const T* __restrict b_panel, T* __restrict c, int64_t ldc, bool from_zero) {
    V acc[kRows][kVectors];
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) {
        acc[r][v] = from_zero ? L::zero() : L::load(c + r * ldc + v * L::kWidth);
      }
    }
#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; ++k) {
      V b[kVectors];
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) b[v] = L::load(b_panel + k * kCols + v * L::kWidth);
#pragma GCC unroll 16
      for (int r = 0; r < kRows; ++r) {
        const V a_kr = L::broadcast(a[k * k_step + r * r_step]);
#pragma GCC unroll 4
        for (int v = 0; v < kVectors; ++v) acc[r][v] = L::fma(a_kr, b[v], acc[r][v]);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) L::store(c + r * ldc + v * L::kWidth, acc[r][v]);
    }
  }
};

}  // namespace normlab
