// AdamW with decoupled weight decay (Loshchilov & Hutter 2019), as torch.optim.AdamW computes:
//   p ← p · (1 − lr · wd)                       (only tensors with decay, and only if allowed)
//   m ← β1 m + (1 − β1) g,   v ← β2 v + (1 − β2) g²
//   p ← p − (lr / (1 − β1^t)) · m / (sqrt(v) / sqrt(1 − β2^t) + eps)
// Gradient clipping by global norm first (torch.nn.utils.clip_grad_norm_):
//   ‖g‖ = sqrt(Σ g²);  if ‖g‖ > c: g ← g · c / (‖g‖ + 1e-6)
// Parameter groups: weight decay on matrices (TensorSpec::decay), none on norm gains, biases
// and other vectors; none at all when the scheme forbids it (nGPT).
#pragma once

#include <cstdint>
#include <vector>

#include "normlab/model/param_layout.hpp"

namespace normlab {

struct AdamWConfig {
  double lr = 1e-3;            // peak learning rate (schedules scale it per step)
  double beta1 = 0.9;          // first-moment decay
  double beta2 = 0.999;        // second-moment decay
  double eps = 1e-8;           // added to the denominator
  double weight_decay = 0.01;  // decoupled decay on matrices
  double clip_norm = 1.0;      // global gradient-norm clip; 0 disables clipping
};

class AdamW {
 public:
  AdamW(const ParamLayout& layout, const AdamWConfig& config, bool allow_weight_decay);

  // One update with learning rate `lr` (the schedule's value). Returns the gradient's global
  // norm before clipping; if it is not finite, nothing is updated. params and grads are laid
  // out by the layout.
  double step(std::vector<float>& params, const std::vector<float>& grads, double lr);

  const AdamWConfig& config() const { return config_; }
  int64_t steps() const { return t_; }
  // State, for checkpoints that resume bit-identically.
  std::vector<float>& first_moment() { return m_; }
  std::vector<float>& second_moment() { return v_; }
  void set_steps(int64_t t) { t_ = t; }

 private:
  AdamWConfig config_;
  std::vector<float> m_, v_;
  std::vector<float> decay_;  // per element: the weight decay that applies (0 or wd)
  int64_t t_ = 0;
};

// Global L2 norm of a gradient buffer, accumulated in double: within fixed blocks of values (in
// parallel), element i into lane i mod 16 and the lanes summed in a fixed tree, the blocks' sums
// then added in block order. The result depends on the values only, not on the thread count.
double global_norm(const std::vector<float>& g);

}  // namespace normlab
