// A small, fully specified random number generator, so that the same seed gives the same bits
// on every platform and standard library (std::normal_distribution is implementation-defined).
//
// Rng: xoshiro256** seeded through SplitMix64 (Blackman and Vigna, https://prng.di.unimi.it/).
// normal(): Box–Muller transform on two uniform doubles; one value per call (the twin is
// discarded) so the sequence depends only on the number of calls.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace normlab {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { reseed(seed); }

  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (uint64_t& word : state_) word = splitmix64(x);
  }

  // Uniform 64-bit integer.
  uint64_t next_u64() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n), n > 0, without modulo bias (Lemire's method with rejection).
  uint64_t below(uint64_t n) {
    uint64_t x = next_u64();
    __uint128_t m = static_cast<__uint128_t>(x) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        x = next_u64();
        m = static_cast<__uint128_t>(x) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Standard normal N(0, 1) by Box–Muller.
  double normal() {
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

  // The full state, for checkpoints that must resume bit-identically.
  const uint64_t* state() const { return state_; }
  void set_state(const uint64_t s[4]) {
    for (int i = 0; i < 4; ++i) state_[i] = s[i];
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  uint64_t state_[4];
};

}  // namespace normlab
