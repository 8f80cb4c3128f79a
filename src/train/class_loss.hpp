// The cross-entropy over the logits of a block of token ids (train.loss_over = "classes",
// docs/training.md "The loss over the classes").
//
// Letters: N rows of logits, V vocabulary, C = block.count, c0 = block.first.
#pragma once

#include <cstdint>
#include <optional>

#include "core/kernels/cross_entropy.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab {

// cross_entropy (core/kernels/cross_entropy.hpp) of each row's logits [c0, c0 + C) alone: the
// softmax over those C logits, a target token t counted as t − c0; dlogits (N, V), when not
// null, is the kernel's gradient on those logits and 0 on every other. The block is copied
// into a compact (N, C) buffer, so the loss and gradient are the kernel's over V = C, bit for
// bit. Without a block: cross_entropy itself over all V logits.
// Throws UsageError when a scored row's target (weight ≠ 0 and a slot) has a token outside the
// block, and std::logic_error for a block outside [0, V).
template <typename T>
double cross_entropy_over(const T* logits, const SparseTargets<T>& target, const T* weight,
                          T* dlogits, int64_t N, int V, const std::optional<TokenBlock>& block);

}  // namespace normlab
