// Learning-rate schedules: linear warmup from 0, then constant, linear, cosine or
// warmup–stable–decay (WSD) down to min_lr_ratio · lr at the last step.
//   warmup (s < W):  lr · (s + 1) / W
//   linear:          lr · (r + (1 − r) · (1 − p)),           p = (s − W) / max(1, S − W)
//   cosine:          lr · (r + (1 − r) · (1 + cos(π p)) / 2)
//   wsd:             lr until step S − K, then lr · (r + (1 − r) · (1 − q)),
//                    q = (s − (S − K)) / K, K = max(1, round(f · (S − W))) the decay steps
// with s the step from 0, S the total steps, r = min_lr_ratio, f = decay_fraction.
#pragma once

#include <cstdint>
#include <string>

namespace normlab {

enum class Decay { constant, linear, cosine, wsd };

Decay parse_decay(const std::string& s);  // UsageError listing the choices
std::string to_string(Decay d);

double learning_rate(int64_t step, int64_t total_steps, int64_t warmup, double lr, Decay decay,
                     double min_lr_ratio, double decay_fraction = 0.2);

// WSD: the first step of the decay phase.
int64_t wsd_decay_start(int64_t total_steps, int64_t warmup, double decay_fraction);

}  // namespace normlab
