// The batch of the weighted soft-target cross-entropy from Python's arrays (loss_batch.hpp).
#include "loss_batch.hpp"

#include <fmt/format.h>

#include "normlab/base/errors.hpp"

namespace py = pybind11;

namespace normlab::python {

Batch loss_batch(const TokenBatch& tb, const py::array& targets,
                 const std::optional<py::array>& weight, int V) {
  Batch b;
  b.resize(tb.batch, tb.len, V, tb.fields);
  b.tokens = tb.ids;
  const int64_t N = tb.batch * tb.len;
  std::fill(b.weight.begin(), b.weight.end(), 0.0f);
  const bool soft = targets.dtype().kind() == 'f';
  const int64_t expected = soft ? N * V : N;
  if (targets.size() != expected) {
    throw InputError(fmt::format(
        "targets: {} values; allowed: int token ids shaped like the tokens' (B, T), -1 = "
        "unscored, or float distributions (B, T, V) with V = {}",
        targets.size(), V));
  }
  if (soft) {
    // Each (V) row becomes a sparse target: its nonzero entries.
    const std::vector<float> t = c_order_values<float>(targets);
    std::vector<int32_t> tokens;
    std::vector<float> probs;
    for (int64_t n = 0; n < N; ++n) {
      tokens.clear();
      probs.clear();
      for (int v = 0; v < V; ++v) {
        if (const float p = t[n * V + v]; p != 0.0f) {
          tokens.push_back(v);
          probs.push_back(p);
        }
      }
      b.set_target(n, tokens.data(), probs.data(), static_cast<int64_t>(tokens.size()));
      b.weight[n] = 1.0f;
    }
  } else {
    const TokenBatch ids = token_batch(targets, 1);
    for (int64_t n = 0; n < N; ++n) {
      if (ids.ids[n] == kNoToken) continue;
      if (ids.ids[n] < 0 || ids.ids[n] >= V) {
        throw InputError(fmt::format("targets: token {} is outside [0, {})", ids.ids[n], V));
      }
      b.set_one_hot(n, ids.ids[n]);
    }
  }
  if (weight) {
    if (weight->size() != N) {
      throw InputError(
          fmt::format("weight: {} values, the tokens have B·T = {}", weight->size(), N));
    }
    const std::vector<float> w = c_order_values<float>(*weight);
    for (int64_t n = 0; n < N; ++n) b.weight[n] = b.target_slot[n] >= 0 ? w[n] : 0.0f;
  }
  return b;
}

py::array_t<float> dense_targets(const Batch& batch) {
  py::array_t<float> out({batch.batch, batch.len, static_cast<int64_t>(batch.vocab)});
  const std::vector<float> dense = batch.dense_target();
  std::copy(dense.begin(), dense.end(), out.mutable_data());
  return out;
}

}  // namespace normlab::python
