// One optimizer step: forward, cross-entropy, backward, AdamW, the scheme's weight
// constraints (nGPT unit norms).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "normlab/base/batch.hpp"
#include "normlab/model/model.hpp"
#include "normlab/optim/adamw.hpp"

namespace normlab {

struct StepResult {
  double loss = 0;       // mean cross-entropy over scored positions (or the CustomLoss)
  double grad_norm = 0;  // global gradient norm before clipping
  bool stopped = false;  // the CustomLoss asked to stop: nothing was updated
};

// A loss of the caller's in place of the cross-entropy (Python's Trainer, docs/python.md):
// logits (B, T, V) of every position and the batch give the loss, with dL/dlogits (B, T, V)
// written into the third argument; nullopt stops the run before this step's update.
using CustomLoss =
    std::function<std::optional<double>(const float* logits, const Batch& batch, float* dlogits)>;

// Forward and backward only: fills model.grads() (zeroed first) and returns the loss.
// `dlogits` is scratch, resized as needed.
double loss_and_grads(Model<float>& model, const Batch& batch, std::vector<float>& dlogits);
// The same in double (float64 cross-checks; the batch's float targets widened exactly).
double loss_and_grads(Model<double>& model, const Batch& batch, std::vector<double>& dlogits);

// A full step with learning rate `lr`. If the loss or the gradient norm is not finite,
// nothing is updated and the returned loss is not finite.
// With `loss` set, its loss and gradient replace the cross-entropy's.
StepResult train_step(Model<float>& model, AdamW& optimizer, const Batch& batch, double lr,
                      std::vector<float>& dlogits, const CustomLoss& loss = {});

}  // namespace normlab
