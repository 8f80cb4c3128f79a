// Weight averaging beside the raw weights: EMA and bias-corrected EMA (BEMA; Block & Zhang,
// "EMA Without the Lag", arXiv 2508.00180), exactly docs/reference.md §2, the paper's formula:
//
// Averaging starts at step τ (burn-in) with θ_0 = θ_τ and EMA = θ_τ. At every step s ≥ τ
// with (s − τ) mod φ = 0, with t = s − τ:
//   α_t = (ρ + γ t)^(−η),   β_t = (ρ + γ t)^(−κ)
//   EMA_t = (1 − β_t) EMA_{t−φ} + β_t θ_s
//   BEMA_t = α_t (θ_s − θ_0) + EMA_t
// (normlab choice: this formula, not the official code's t = max(s − τ + ρ, 1) with
// β = (1 + γ t)^(−κ); see docs/training.md.) Plain EMA is the same with α_t = 0.
// The step s counts optimizer steps completed (s = 1 after the first update).
#pragma once

#include <cstdint>
#include <vector>

namespace normlab {

struct AveragingConfig {
  int64_t every = 400;  // φ: update period in steps
  int64_t start = 0;    // τ: burn-in, steps before averaging starts
  double kappa = 0.5;   // κ: EMA decay exponent
  double eta = 0.2;     // η: bias-correction decay exponent
  double rho = 10.0;    // ρ: offset
  double gamma = 1.0;   // γ: time scale
};

class WeightAverager {
 public:
  WeightAverager(const AveragingConfig& config, int64_t size);

  // Call after every optimizer step with the step count s (≥ 1) and the new weights.
  void observe(int64_t step, const std::vector<float>& weights);

  bool started() const { return started_; }
  const AveragingConfig& config() const { return config_; }
  // The averaged weights; meaningful once started() (before that, use the raw weights).
  const std::vector<float>& ema() const { return ema_; }
  const std::vector<float>& bema() const { return bema_; }

  // State for checkpoints.
  std::vector<float>& theta0() { return theta0_; }
  std::vector<float>& ema_mut() { return ema_; }
  std::vector<float>& bema_mut() { return bema_; }
  void set_started(bool s) { started_ = s; }

 private:
  AveragingConfig config_;
  bool started_ = false;
  std::vector<float> theta0_, ema_, bema_;
};

}  // namespace normlab
