#include "normlab/batch.hpp"

#include <algorithm>

namespace normlab {

void Batch::resize(int64_t b, int64_t t, int v, int f) {
  batch = b;
  len = t;
  vocab = v;
  fields = f;
  tokens.assign(b * t * f, kNoToken);
  weight.assign(b * t, 0.0f);
  targets.clear();
  target_slot.assign(b * t, -1);
}

float* Batch::target_row(int64_t n) {
  if (target_slot[n] < 0) {
    target_slot[n] = static_cast<int32_t>(targets.size() / vocab);
    targets.resize(targets.size() + vocab, 0.0f);
  }
  return targets.data() + static_cast<int64_t>(target_slot[n]) * vocab;
}

const float* Batch::target_row(int64_t n) const {
  return target_slot[n] < 0 ? nullptr
                            : targets.data() + static_cast<int64_t>(target_slot[n]) * vocab;
}

float Batch::target_value(int64_t n, int v) const {
  const float* row = target_row(n);
  return row == nullptr ? 0.0f : row[v];
}

void Batch::set_one_hot(int64_t n, int32_t token) {
  float* row = target_row(n);
  std::fill(row, row + vocab, 0.0f);
  row[token] = 1.0f;
  weight[n] = 1.0f;
}

std::vector<float> Batch::dense_target() const {
  std::vector<float> out(batch * len * vocab, 0.0f);
  for (int64_t n = 0; n < batch * len; ++n) {
    if (const float* row = target_row(n)) std::copy(row, row + vocab, out.begin() + n * vocab);
  }
  return out;
}

Batch random_next_token_batch(int vocab, int64_t batch, int64_t len, Rng& rng) {
  Batch out;
  out.resize(batch, len, vocab);
  for (auto& t : out.tokens) t = static_cast<int32_t>(rng.below(vocab));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t + 1 < len; ++t) {
      out.set_one_hot(b * len + t, out.tokens[b * len + t + 1]);
    }
  }
  return out;
}

}  // namespace normlab
