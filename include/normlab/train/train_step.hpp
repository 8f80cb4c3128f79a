// One optimizer step: forward, cross-entropy (over the vocabulary or the task's classes),
// backward, AdamW, the scheme's weight constraints (nGPT unit norms).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "normlab/base/batch.hpp"
#include "normlab/model/model.hpp"
#include "normlab/optim/adamw.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/train_config.hpp"

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

// The logits the cross-entropy is taken over: nullopt, the whole vocabulary; a block, the
// softmax over its logits alone, every other logit without gradient (train.loss_over =
// "classes"; train/class_loss.hpp). A scored target outside the block is a UsageError.
using LossLogits = std::optional<TokenBlock>;

// The block train.loss_over selects for `task`: nullopt for "vocabulary", the task's classes
// (Task::class_block) for "classes"; UsageError when the task has none.
LossLogits loss_logits(const TrainConfig& config, const Task& task);

// Forward and backward only: fills model.grads() (zeroed first) and returns the loss.
// `dlogits` is scratch, resized as needed.
double loss_and_grads(Model<float>& model, const Batch& batch, std::vector<float>& dlogits,
                      const LossLogits& over = std::nullopt);
// The same in double (float64 cross-checks; the batch's float targets widened exactly).
double loss_and_grads(Model<double>& model, const Batch& batch, std::vector<double>& dlogits,
                      const LossLogits& over = std::nullopt);

// A full step with learning rate `lr`. If the loss or the gradient norm is not finite,
// nothing is updated and the returned loss is not finite.
// With `loss` set, its loss and gradient replace the cross-entropy's (and `over` is unused).
StepResult train_step(Model<float>& model, AdamW& optimizer, const Batch& batch, double lr,
                      std::vector<float>& dlogits, const CustomLoss& loss = {},
                      const LossLogits& over = std::nullopt);

}  // namespace normlab
