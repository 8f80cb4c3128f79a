// One optimizer step: forward, cross-entropy, backward, AdamW, the scheme's weight
// constraints (nGPT unit norms).
#pragma once

#include <vector>

#include "normlab/base/batch.hpp"
#include "normlab/model/model.hpp"
#include "normlab/optim/adamw.hpp"

namespace normlab {

struct StepResult {
  double loss = 0;       // mean cross-entropy over scored positions
  double grad_norm = 0;  // global gradient norm before clipping
};

// Forward and backward only: fills model.grads() (zeroed first) and returns the loss.
// `dlogits` is scratch, resized as needed.
double loss_and_grads(Model<float>& model, const Batch& batch, std::vector<float>& dlogits);
// The same in double (float64 cross-checks; the batch's float targets widened exactly).
double loss_and_grads(Model<double>& model, const Batch& batch, std::vector<double>& dlogits);

// A full step with learning rate `lr`. If the loss or the gradient norm is not finite,
// nothing is updated and the returned loss is not finite.
StepResult train_step(Model<float>& model, AdamW& optimizer, const Batch& batch, double lr,
                      std::vector<float>& dlogits);

}  // namespace normlab
