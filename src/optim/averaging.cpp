#include "normlab/optim/averaging.hpp"

#include <cmath>

namespace normlab {

WeightAverager::WeightAverager(const AveragingConfig& config, int64_t size)
    : config_(config), theta0_(size, 0.0f), ema_(size, 0.0f), bema_(size, 0.0f) {}

void WeightAverager::observe(int64_t step, const std::vector<float>& w) {
  if (step < config_.start) return;
  if (!started_) {
    started_ = true;
    theta0_ = w;
    ema_ = w;
    bema_ = w;
    return;
  }
  const int64_t t = step - config_.start;
  if (t % config_.every != 0) return;
  const double base = config_.rho + config_.gamma * static_cast<double>(t);
  const float alpha = static_cast<float>(std::pow(base, -config_.eta));
  const float beta = static_cast<float>(std::pow(base, -config_.kappa));
  const size_t n = w.size();
  for (size_t i = 0; i < n; ++i) {
    ema_[i] = (1.0f - beta) * ema_[i] + beta * w[i];
    bema_[i] = alpha * (w[i] - theta0_[i]) + ema_[i];
  }
}

}  // namespace normlab
