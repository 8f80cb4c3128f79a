#include "normlab/train/train_step.hpp"

#include <fmt/format.h>

#include <cmath>

#include "normlab/base/errors.hpp"
#include "train/batch_targets.hpp"
#include "train/class_loss.hpp"

namespace normlab {

namespace {

// The batch's targets with probabilities of type T: the batch's own for float, widened for
// double (into `widened`).
SparseTargets<float> targets_as(const Batch& batch, const int32_t* slots, std::vector<float>&) {
  return sparse_targets(batch, slots);
}

SparseTargets<double> targets_as(const Batch& batch, const int32_t* slots,
                                 std::vector<double>& widened) {
  const SparseTargets<float> t = sparse_targets(batch, slots);
  widened.assign(batch.target_probs.begin(), batch.target_probs.end());
  return {.slot = t.slot, .offsets = t.offsets, .tokens = t.tokens, .probs = widened.data()};
}

template <typename T>
double loss_and_grads_of(Model<T>& model, const Batch& batch, std::vector<T>& dlogits,
                         const LossLogits& over) {
  // Only rows with a target reach the unembedding; their targets, in row order.
  thread_local std::vector<int64_t> rows;
  thread_local std::vector<int32_t> slots;
  thread_local std::vector<T> weights;
  thread_local std::vector<T> probs;
  rows.clear();
  slots.clear();
  weights.clear();
  for (int64_t n = 0; n < batch.batch * batch.len; ++n) {
    if (batch.target_slot[n] >= 0 && batch.weight[n] != 0.0f) {
      rows.push_back(n);
      slots.push_back(batch.target_slot[n]);
      weights.push_back(batch.weight[n]);
    }
  }
  const int64_t R = static_cast<int64_t>(rows.size());
  if (!over && model.readout_loss_fuses()) {
    // The cross-entropy over the vocabulary inside the readout, shard by shard: the bits of
    // the path below without its (R, V) logits and gradient (model.hpp).
    // The shards run on several threads: the thread_local vectors are read by pointer.
    const SparseTargets<T> targets = targets_as(batch, slots.data(), probs);
    const T* weight = weights.data();
    const double inv_total = cross_entropy_inv_total(weight, R);
    const double sum = model.forward_with_readout_loss(
        batch.tokens.data(), batch.batch, batch.len, batch.fields, rows,
        [&targets, weight, inv_total, V = batch.vocab](int64_t n0, int64_t n1, T* logits,
                                                       double sum) {
          return cross_entropy_rows(logits, targets, weight, logits, n0, n1, V, inv_total, sum);
        });
    const double loss = sum * inv_total;
    if (R > 0 && std::isfinite(loss)) {
      model.backward_after_readout();
    } else {
      model.zero_grads();
    }
    return loss;
  }
  dlogits.resize(R * batch.vocab);
  const T* logits = model.forward(batch.tokens.data(), batch.batch, batch.len, batch.fields, &rows);
  const double loss = cross_entropy_over(logits, targets_as(batch, slots.data(), probs),
                                         weights.data(), dlogits.data(), R, batch.vocab, over);
  model.zero_grads();
  // Without a scored row (every target unscored, or every weight 0) the loss and each gradient
  // are 0: there are no rows of logits to propagate back.
  if (R > 0 && std::isfinite(loss)) model.backward(dlogits.data());
  return loss;
}

}  // namespace

LossLogits loss_logits(const TrainConfig& config, const Task& task) {
  if (config.loss_over == LossOver::vocabulary) return std::nullopt;
  const std::optional<TokenBlock> classes = task.class_block();
  if (!classes) {
    throw UsageError(fmt::format(
        "loss_over = \"classes\" needs a task whose targets are a block of output classes (the "
        "Chomsky-hierarchy tasks); task {} has none; allowed: loss_over = \"vocabulary\"",
        task.label()));
  }
  return classes;
}

double loss_and_grads(Model<float>& model, const Batch& batch, std::vector<float>& dlogits,
                      const LossLogits& over) {
  return loss_and_grads_of(model, batch, dlogits, over);
}

double loss_and_grads(Model<double>& model, const Batch& batch, std::vector<double>& dlogits,
                      const LossLogits& over) {
  return loss_and_grads_of(model, batch, dlogits, over);
}

StepResult train_step(Model<float>& model, AdamW& optimizer, const Batch& batch, double lr,
                      std::vector<float>& dlogits, const CustomLoss& loss, const LossLogits& over) {
  StepResult r;
  if (loss) {
    const float* logits = model.forward(batch.tokens.data(), batch.batch, batch.len, batch.fields);
    dlogits.assign(batch.batch * batch.len * batch.vocab, 0.0f);
    const std::optional<double> value = loss(logits, batch, dlogits.data());
    if (!value) {
      r.stopped = true;
      return r;
    }
    r.loss = *value;
    if (!std::isfinite(r.loss)) return r;
    model.zero_grads();
    model.backward(dlogits.data());
  } else {
    r.loss = loss_and_grads(model, batch, dlogits, over);
  }
  if (!std::isfinite(r.loss)) return r;
  r.grad_norm = optimizer.step(model.params(), model.grads(), lr);
  if (!std::isfinite(r.grad_norm)) {
    r.loss = r.grad_norm;  // report the step as non-finite; the weights were not touched
    return r;
  }
  model.apply_weight_constraints();
  return r;
}

}  // namespace normlab
