// A training or evaluation batch: tokens with a target distribution and a weight at every
// position (weight 0 = unscored). Letters: B batch, T length, V vocab.
#pragma once

#include <cstdint>
#include <vector>

#include "normlab/rng.hpp"

namespace normlab {

struct Batch {
  int64_t batch = 0;            // B
  int64_t len = 0;              // T
  int vocab = 0;                // V
  std::vector<int32_t> tokens;  // (B, T)
  std::vector<float> target;    // (B, T, V) a distribution at every scored position
  std::vector<float> weight;    // (B, T) loss weight; 0 = not scored

  void resize(int64_t b, int64_t t, int v);
  // Sets a one-hot target at row n (= b·T + t).
  void set_one_hot(int64_t n, int32_t token);
};

// Uniform random tokens; the target at position t is the token at t + 1 (one-hot), the last
// position is unscored. Used by `train-steps`, the benchmarks and the cross-checks.
Batch random_next_token_batch(int vocab, int64_t batch, int64_t len, Rng& rng);

}  // namespace normlab
