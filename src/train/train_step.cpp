#include "normlab/train_step.hpp"

#include <cmath>

#include "core/kernels/cross_entropy.hpp"

namespace normlab {

double loss_and_grads(Model<float>& model, const Batch& batch, std::vector<float>& dlogits) {
  const int64_t N = batch.batch * batch.len;
  dlogits.resize(N * batch.vocab);
  const float* logits = model.forward(batch.tokens.data(), batch.batch, batch.len, batch.fields);
  const double loss = cross_entropy(logits, batch.targets.data(), batch.weight.data(),
                                    dlogits.data(), N, batch.vocab, batch.target_slot.data());
  model.zero_grads();
  if (std::isfinite(loss)) model.backward(dlogits.data());
  return loss;
}

StepResult train_step(Model<float>& model, AdamW& optimizer, const Batch& batch, double lr,
                      std::vector<float>& dlogits) {
  StepResult r;
  r.loss = loss_and_grads(model, batch, dlogits);
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
