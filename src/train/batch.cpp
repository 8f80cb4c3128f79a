#include "normlab/batch.hpp"

#include <algorithm>

namespace normlab {

void Batch::resize(int64_t b, int64_t t, int v, int f) {
  batch = b;
  len = t;
  vocab = v;
  fields = f;
  tokens.assign(b * t * f, kNoToken);
  target.assign(b * t * v, 0.0f);
  weight.assign(b * t, 0.0f);
}

void Batch::set_one_hot(int64_t n, int32_t token) {
  std::fill(target.begin() + n * vocab, target.begin() + (n + 1) * vocab, 0.0f);
  target[n * vocab + token] = 1.0f;
  weight[n] = 1.0f;
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
