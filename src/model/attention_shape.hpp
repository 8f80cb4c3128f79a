// The attention kernels' shape for a model's attention sublayers (core/kernels/attention.hpp):
// B sequences of T tokens, the model's width, heads, mask, logit scale and ALiBi bias.
#pragma once

#include <cstdint>

#include "core/kernels/attention.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

inline AttentionShape attention_shape(const ModelConfig& c, int64_t batch, int64_t len) {
  return {.batch = batch,
          .len = len,
          .width = c.width,
          .heads = c.heads,
          .causal = c.causal,
          .scale = attention_scale(c),
          .alibi = c.pos == PosEncoding::alibi};
}

}  // namespace normlab
