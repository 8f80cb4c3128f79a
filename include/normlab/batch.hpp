// A training or evaluation batch: tokens with a target distribution and a weight at every
// position (weight 0 = unscored). Letters: B batch, T length, V vocab, F fields.
//
// A position may carry several tokens (fields), e.g. the (score, value) of an item; the model
// sums their embeddings, which is a linear embedding of the concatenated one-hot fields.
// An empty field holds kNoToken.
#pragma once

#include <cstdint>
#include <vector>

#include "normlab/rng.hpp"

namespace normlab {

inline constexpr int32_t kNoToken = -1;

struct Batch {
  int64_t batch = 0;            // B
  int64_t len = 0;              // T
  int vocab = 0;                // V
  int fields = 1;               // F tokens per position
  std::vector<int32_t> tokens;  // (B, T, F)
  std::vector<float> target;    // (B, T, V) a distribution at every scored position
  std::vector<float> weight;    // (B, T) loss weight; 0 = not scored

  void resize(int64_t b, int64_t t, int v, int f = 1);
  // Token of field f at row n (= b·T + t).
  int32_t& token(int64_t n, int f = 0) { return tokens[n * fields + f]; }
  int32_t token(int64_t n, int f = 0) const { return tokens[n * fields + f]; }
  // Sets a one-hot target at row n (= b·T + t).
  void set_one_hot(int64_t n, int32_t token);
};

// Uniform random tokens; the target at position t is the token at t + 1 (one-hot), the last
// position is unscored. Used by `train-steps`, the benchmarks and the cross-checks.
Batch random_next_token_batch(int vocab, int64_t batch, int64_t len, Rng& rng);

}  // namespace normlab
