// A batch's targets as the cross-entropy kernel reads them (core/kernels/cross_entropy.hpp).
#pragma once

#include "core/kernels/cross_entropy.hpp"
#include "normlab/base/batch.hpp"

namespace normlab {

// slot: (N) logits row → index of its target in the batch (Batch::target_slot, or the slots of
// the rows that reach the unembedding, in their order).
inline SparseTargets<float> sparse_targets(const Batch& batch, const int32_t* slot) {
  return {.slot = slot,
          .offsets = batch.target_offsets.data(),
          .tokens = batch.target_tokens.data(),
          .probs = batch.target_probs.data()};
}

}  // namespace normlab
