#include "normlab/base/batch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace normlab {

float TargetView::value(int32_t token) const {
  const int32_t* end = tokens + size;
  const int32_t* it = std::lower_bound(tokens, end, token);
  return it != end && *it == token ? probs[it - tokens] : 0.0f;
}

int32_t TargetView::most_likely() const {
  int64_t best = -1;
  for (int64_t i = 0; i < size; ++i) {
    if (best < 0 || probs[i] > probs[best]) best = i;  // ascending tokens: the first is lowest
  }
  return best < 0 ? kNoToken : tokens[best];
}

void Batch::resize(int64_t b, int64_t t, int v, int f) {
  batch = b;
  len = t;
  vocab = v;
  fields = f;
  tokens.assign(b * t * f, kNoToken);
  weight.assign(b * t, 0.0f);
  target_slot.assign(b * t, -1);
  target_offsets.assign(1, 0);
  target_tokens.clear();
  target_probs.clear();
}

void Batch::set_target(int64_t n, const int32_t* toks, const float* probs, int64_t k) {
  thread_local std::vector<std::pair<int32_t, float>> entries;
  entries.clear();
  for (int64_t i = 0; i < k; ++i) entries.emplace_back(toks[i], probs[i]);
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < entries.size(); ++i) {
    const int32_t tok = entries[i].first;
    if (tok < 0 || tok >= vocab || (i > 0 && entries[i - 1].first == tok)) {
      throw std::invalid_argument(fmt::format("Batch::set_target: row {}: token {} is {}", n, tok,
                                              tok < 0 || tok >= vocab
                                                  ? fmt::format("outside [0, {})", vocab)
                                                  : std::string("listed twice")));
    }
    target_tokens.push_back(tok);
    target_probs.push_back(entries[i].second);
  }
  target_slot[n] = static_cast<int32_t>(target_count());
  target_offsets.push_back(static_cast<int64_t>(target_tokens.size()));
}

void Batch::set_one_hot(int64_t n, int32_t token) {
  const float one = 1.0f;
  set_target(n, &token, &one, 1);
  weight[n] = 1.0f;
}

void Batch::set_uniform(int64_t n, const int32_t* toks, int64_t k) {
  thread_local std::vector<float> probs;
  probs.assign(k, 1.0f / static_cast<float>(k));
  set_target(n, toks, probs.data(), k);
  weight[n] = 1.0f;
}

TargetView Batch::target(int64_t n) const {
  const int32_t r = target_slot[n];
  if (r < 0) return {};
  const int64_t first = target_offsets[r];
  return {target_tokens.data() + first, target_probs.data() + first, target_offsets[r + 1] - first};
}

std::vector<float> Batch::dense_target_row(int64_t n) const {
  std::vector<float> row(vocab, 0.0f);
  const TargetView t = target(n);
  for (int64_t i = 0; i < t.size; ++i) row[t.tokens[i]] = t.probs[i];
  return row;
}

std::vector<float> Batch::dense_target() const {
  std::vector<float> out(batch * len * vocab, 0.0f);
  for (int64_t n = 0; n < batch * len; ++n) {
    const TargetView t = target(n);
    for (int64_t i = 0; i < t.size; ++i) out[n * vocab + t.tokens[i]] = t.probs[i];
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
