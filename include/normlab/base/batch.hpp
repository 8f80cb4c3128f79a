// A training or evaluation batch: tokens, a weight at every position (weight 0 = unscored),
// and a target distribution at the scored positions. Letters: B batch, T length, V vocab,
// F fields, R targets, E target entries (R ≤ B·T; E ≤ R·V, and for the tasks E ≈ R·k with k
// the size of a target's support: 1 for one-hot targets, the legal set for uniform ones).
//
// Targets are sparse: each is the list of its (token, probability) entries, tokens ascending
// and distinct, in the arrays of a compressed-row layout (target r's entries are
// [target_offsets[r], target_offsets[r + 1])). Tokens outside the list have probability 0. No
// V-wide row is ever built, so a task with a large vocabulary (dict_lookup: V = 16401) pays per
// target for the entries it has, not for V; dense_target() exists for export and tests only.
//
// A position may carry several tokens (fields), e.g. the (score, value) of an item; the model
// sums their embeddings, which is a linear embedding of the concatenated one-hot fields.
// An empty field holds kNoToken.
#pragma once

#include <cstdint>
#include <vector>

#include "normlab/base/rng.hpp"

namespace normlab {

inline constexpr int32_t kNoToken = -1;

// One target distribution as its nonzero entries, tokens ascending (a view into a Batch).
struct TargetView {
  const int32_t* tokens = nullptr;  // (K)
  const float* probs = nullptr;     // (K)
  int64_t size = 0;                 // K; 0 for a row without a target

  // Probability of `token` (0 if it is not listed).
  float value(int32_t token) const;
  // The token of largest probability, the lowest on ties; kNoToken for an empty target.
  int32_t most_likely() const;
};

struct Batch {
  int64_t batch = 0;                    // B
  int64_t len = 0;                      // T
  int vocab = 0;                        // V
  int fields = 1;                       // F tokens per position
  std::vector<int32_t> tokens;          // (B, T, F)
  std::vector<float> weight;            // (B, T) loss weight; 0 = not scored
  std::vector<int32_t> target_slot;     // (B, T) row n → its target r, -1 = none
  std::vector<int64_t> target_offsets;  // (R + 1) target r's entries: [offsets[r], offsets[r+1])
  std::vector<int32_t> target_tokens;   // (E) ascending and distinct within a target
  std::vector<float> target_probs;      // (E)

  void resize(int64_t b, int64_t t, int v, int f = 1);
  // Token of field f at row n (= b·T + t).
  int32_t& token(int64_t n, int f = 0) { return tokens[n * fields + f]; }
  int32_t token(int64_t n, int f = 0) const { return tokens[n * fields + f]; }

  // Sets row n's target to the k entries (tokens[i], probs[i]) in any order; the tokens must be
  // distinct and in [0, V) (std::invalid_argument otherwise). The weight is left alone. Setting
  // a row again replaces its target (the old entries stay in the arrays, unreferenced).
  void set_target(int64_t n, const int32_t* tokens, const float* probs, int64_t k);
  // Sets a one-hot target at row n and its weight to 1.
  void set_one_hot(int64_t n, int32_t token);
  // Sets row n's target to the uniform distribution over the k distinct tokens listed (each
  // 1/k in float) and its weight to 1.
  void set_uniform(int64_t n, const int32_t* tokens, int64_t k);

  // Number of targets R (rows that were given one, counting replaced ones).
  int64_t target_count() const { return static_cast<int64_t>(target_offsets.size()) - 1; }
  // Row n's target (size 0 if it has none).
  TargetView target(int64_t n) const;
  // Target probability of token v at row n (0 for rows without a target).
  float target_value(int64_t n, int v) const { return target(n).value(v); }
  // Row n's target as a dense (V) row, and all targets as a dense (B, T, V) array (zeros where
  // there is none): for export and tests only.
  std::vector<float> dense_target_row(int64_t n) const;
  std::vector<float> dense_target() const;
};

// Uniform random tokens; the target at position t is the token at t + 1 (one-hot), the last
// position is unscored. Used by `train-steps`, the benchmarks and the cross-checks.
Batch random_next_token_batch(int vocab, int64_t batch, int64_t len, Rng& rng);

}  // namespace normlab
