// Learning-rate schedules: linear warmup from 0, then constant, linear or cosine decay to
// min_lr_ratio · lr at the last step.
//   warmup (s < W):  lr · (s + 1) / W
//   linear:          lr · (r + (1 − r) · (1 − p)),           p = (s − W) / max(1, S − W)
//   cosine:          lr · (r + (1 − r) · (1 + cos(π p)) / 2)
// with s the step from 0, S the total steps, r = min_lr_ratio.
#pragma once

#include <cstdint>
#include <string>

namespace normlab {

enum class Decay { constant, linear, cosine };

Decay parse_decay(const std::string& s);  // UsageError listing the choices
std::string to_string(Decay d);

double learning_rate(int64_t step, int64_t total_steps, int64_t warmup, double lr, Decay decay,
                     double min_lr_ratio);

}  // namespace normlab
