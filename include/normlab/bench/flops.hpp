// Model FLOPs of one training step, counted from the config (for throughput figures).
//
// Counted: every matrix product (2·M·N·K each) of the forward pass, times 3 for forward plus
// backward (the backward computes two products per forward product); attention scores and
// the weighted sum of values (causal: T(T+1)/2 pairs per head); AdamW at 12 FLOPs per
// parameter. Not counted: norms, activations, softmax and other elementwise work.
#pragma once

#include <cstdint>

#include "normlab/model/model_config.hpp"

namespace normlab {

// Forward-pass FLOPs for a batch of B sequences of length T.
double forward_flops(const ModelConfig& config, int64_t batch, int64_t len);

// Forward + backward + optimizer FLOPs of one training step.
double train_step_flops(const ModelConfig& config, int64_t batch, int64_t len, int64_t parameters);

}  // namespace normlab
