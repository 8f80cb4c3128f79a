// A training or evaluation batch: tokens, a weight at every position (weight 0 = unscored),
// and a target distribution at the scored positions. Letters: B batch, T length, V vocab,
// F fields, R rows that carry a target.
//
// Targets are stored only for the rows that have one (R ≤ B·T), so a task with a large
// vocabulary and one scored position per sequence does not pay for (B, T, V).
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
  int64_t batch = 0;                 // B
  int64_t len = 0;                   // T
  int vocab = 0;                     // V
  int fields = 1;                    // F tokens per position
  std::vector<int32_t> tokens;       // (B, T, F)
  std::vector<float> weight;         // (B, T) loss weight; 0 = not scored
  std::vector<float> targets;        // (R, V) target rows, in the order they were created
  std::vector<int32_t> target_slot;  // (B, T) row n → index into targets, -1 = none

  void resize(int64_t b, int64_t t, int v, int f = 1);
  // Token of field f at row n (= b·T + t).
  int32_t& token(int64_t n, int f = 0) { return tokens[n * fields + f]; }
  int32_t token(int64_t n, int f = 0) const { return tokens[n * fields + f]; }
  // The target distribution of row n (= b·T + t), created as zeros on first use.
  float* target_row(int64_t n);
  // Row n's target, or null if it has none.
  const float* target_row(int64_t n) const;
  // Target probability of token v at row n (0 for rows without a target).
  float target_value(int64_t n, int v) const;
  // Sets a one-hot target at row n and its weight to 1.
  void set_one_hot(int64_t n, int32_t token);
  // All targets as a dense (B, T, V) array, for export and tests.
  std::vector<float> dense_target() const;
};

// Uniform random tokens; the target at position t is the token at t + 1 (one-hot), the last
// position is unscored. Used by `train-steps`, the benchmarks and the cross-checks.
Batch random_next_token_batch(int vocab, int64_t batch, int64_t len, Rng& rng);

}  // namespace normlab
