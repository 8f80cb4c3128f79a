#include "normlab/optim/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "normlab/base/errors.hpp"

namespace normlab {

Decay parse_decay(const std::string& s) {
  if (s == "constant") return Decay::constant;
  if (s == "linear") return Decay::linear;
  if (s == "cosine") return Decay::cosine;
  if (s == "wsd") return Decay::wsd;
  throw UsageError("unknown schedule '" + s + "'; allowed: constant, linear, cosine, wsd");
}

std::string to_string(Decay d) {
  switch (d) {
    case Decay::constant:
      return "constant";
    case Decay::linear:
      return "linear";
    case Decay::cosine:
      return "cosine";
    case Decay::wsd:
      return "wsd";
  }
  return "?";
}

int64_t wsd_decay_start(int64_t total_steps, int64_t warmup, double decay_fraction) {
  const int64_t after_warmup = std::max<int64_t>(0, total_steps - warmup);
  const int64_t decay_steps =
      std::max<int64_t>(1, std::llround(decay_fraction * static_cast<double>(after_warmup)));
  return total_steps - decay_steps;
}

double learning_rate(int64_t step, int64_t total_steps, int64_t warmup, double lr, Decay decay,
                     double min_lr_ratio, double decay_fraction) {
  if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (decay == Decay::constant) return lr;
  if (decay == Decay::wsd) {
    const int64_t start = wsd_decay_start(total_steps, warmup, decay_fraction);
    if (step < start) return lr;
    const double q = std::clamp(
        static_cast<double>(step - start) / static_cast<double>(total_steps - start), 0.0, 1.0);
    return lr * (min_lr_ratio + (1 - min_lr_ratio) * (1 - q));
  }
  const double span = static_cast<double>(std::max<int64_t>(1, total_steps - warmup));
  const double p = std::clamp(static_cast<double>(step - warmup) / span, 0.0, 1.0);
  const double r = min_lr_ratio;
  if (decay == Decay::linear) return lr * (r + (1 - r) * (1 - p));
  return lr * (r + (1 - r) * 0.5 * (1 + std::cos(std::numbers::pi * p)));
}

}  // namespace normlab
