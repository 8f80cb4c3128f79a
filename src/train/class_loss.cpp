#include "train/class_loss.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "normlab/base/errors.hpp"

namespace normlab {

template <typename T>
double cross_entropy_over(const T* logits, const SparseTargets<T>& target, const T* weight,
                          T* dlogits, int64_t N, int V, const std::optional<TokenBlock>& block) {
  if (!block) return cross_entropy(logits, target, weight, dlogits, N, V);
  const int32_t c0 = block->first;
  const int C = block->count;
  if (c0 < 0 || C < 1 || c0 + C > V) {
    throw std::logic_error(
        fmt::format("cross_entropy_over: block [{}, {}) is not inside [0, {})", c0, c0 + C, V));
  }
  // The scored rows' target entries, their tokens counted from c0; the entries of other
  // targets are never read by the kernel.
  thread_local std::vector<int32_t> tokens;
  thread_local std::vector<T> compact, dcompact;
  int64_t entries = 0;
  auto slot_of = [&](int64_t n) { return target.slot != nullptr ? target.slot[n] : n; };
  for (int64_t n = 0; n < N; ++n) {
    const int64_t slot = slot_of(n);
    if (weight[n] == T(0) || slot < 0) continue;
    for (int64_t k = target.offsets[slot]; k < target.offsets[slot + 1]; ++k) {
      const int32_t t = target.tokens[k];
      if (t < c0 || t >= c0 + C) {
        throw UsageError(fmt::format(
            "the loss runs over the logits of the task's classes, token ids {} to {} "
            "(train.loss_over = \"classes\"), but the target of scored row {} has token {}",
            c0, c0 + C - 1, n, t));
      }
    }
    entries = std::max(entries, target.offsets[slot + 1]);
  }
  tokens.resize(entries);
  for (int64_t k = 0; k < entries; ++k) tokens[k] = target.tokens[k] - c0;
  compact.resize(N * C);
  for (int64_t n = 0; n < N; ++n) {
    std::copy_n(logits + n * V + c0, C, compact.data() + n * C);
  }
  if (dlogits != nullptr) dcompact.resize(N * C);
  const SparseTargets<T> shifted{.slot = target.slot,
                                 .offsets = target.offsets,
                                 .tokens = tokens.data(),
                                 .probs = target.probs};
  const double loss = cross_entropy(compact.data(), shifted, weight,
                                    dlogits != nullptr ? dcompact.data() : nullptr, N, C);
  if (dlogits != nullptr) {
    for (int64_t n = 0; n < N; ++n) {
      T* row = dlogits + n * V;
      std::fill(row, row + V, T(0));
      std::copy_n(dcompact.data() + n * C, C, row + c0);
    }
  }
  return loss;
}

template double cross_entropy_over<float>(const float*, const SparseTargets<float>&, const float*,
                                          float*, int64_t, int, const std::optional<TokenBlock>&);
template double cross_entropy_over<double>(const double*, const SparseTargets<double>&,
                                           const double*, double*, int64_t, int,
                                           const std::optional<TokenBlock>&);

}  // namespace normlab
