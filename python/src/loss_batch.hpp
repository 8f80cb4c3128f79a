// The batch of the weighted soft-target cross-entropy (the `normlab grads` loss, training's)
// from Python's arrays, and back.
#pragma once

#include <optional>

#include <pybind11/numpy.h>

#include "normlab/base/batch.hpp"
#include "token_arrays.hpp"

namespace normlab::python {

// targets: int (B, T) token ids, -1 = unscored, or float (B, T, V) distributions; weight:
// (B, T), default 1 at every scored position. Throws InputError (ValueError) naming the
// argument.
Batch loss_batch(const TokenBatch& tokens, const pybind11::array& targets,
                 const std::optional<pybind11::array>& weight, int vocab);

// The batch's targets as a dense float32 (B, T, V) array, zero rows where unscored.
pybind11::array_t<float> dense_targets(const Batch& batch);

}  // namespace normlab::python
