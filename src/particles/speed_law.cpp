#include "normlab/particles/speed_law.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace normlab::particles {
namespace {

double exp_linear(const ParticlesConfig& c) {  // e^β + n − 1
  return std::exp(c.beta) + c.n - 1.0;
}
double exp_quadratic(const ParticlesConfig& c) {  // sqrt(e^{2β} + n − 1)
  return std::sqrt(std::exp(2.0 * c.beta) + c.n - 1.0);
}

TokenSpeed unit_speed(const TokenTerms&) {
  return {};
}
TokenSpeed pre_speed(const TokenTerms& x) {
  return {.inv_s = 1.0 / x.r, .radial = x.dot};
}
TokenSpeed peri_speed(const TokenTerms& x) {
  return {.inv_s = x.norm > 0 ? 1.0 / (x.r * x.norm) : 0.0,
          .radial = x.norm > 0 ? x.dot / x.norm : 0.0};
}
TokenSpeed ngpt_speed(const TokenTerms& x) {
  return {.inv_s = x.norm > 0 ? x.alpha / x.norm : 0.0};
}
TokenSpeed sqrt_speed(const TokenTerms& x) {
  return {.inv_s = 1.0 / std::sqrt(x.t + 1.0)};
}

TerminalPrediction exponential_2(const ParticlesConfig&) {
  return {"C e^{-2t}", "exponential", 2.0};
}
TerminalPrediction power_3(const ParticlesConfig&) {
  return {"C/t^3", "power law", 3.0};
}

const std::array<SpeedLawRow, 6> kSpeedLaws = {{
    {.law = SpeedLaw::post,
     .name = "post",
     .parameter_key = nullptr,
     .parameter = nullptr,
     .radial_motion = false,
     .speed = unit_speed,
     .initial_velocity = [](const ParticlesConfig& c) { return 2.0 / exp_linear(c); },
     .terminal = exponential_2},
    {.law = SpeedLaw::pre,
     .name = "pre",
     .parameter_key = nullptr,
     .parameter = nullptr,
     .radial_motion = true,
     .speed = pre_speed,
     .initial_velocity = [](const ParticlesConfig& c) { return 2.0 / (c.r0 * exp_linear(c)); },
     .terminal = power_3},
    {.law = SpeedLaw::mix,
     .name = "mix",
     .parameter_key = "tau",
     .parameter = &ParticlesConfig::tau,
     .radial_motion = true,
     .speed = unit_speed,
     .initial_velocity =
         [](const ParticlesConfig& c) {
           return c.tau > 0 ? 2.0 / exp_linear(c) : 2.0 / (c.r0 * exp_linear(c));
         },
     .terminal = power_3},
    {.law = SpeedLaw::peri,
     .name = "peri",
     .parameter_key = nullptr,
     .parameter = nullptr,
     .radial_motion = true,
     .speed = peri_speed,
     .initial_velocity = [](const ParticlesConfig& c) { return 2.0 / (c.r0 * exp_quadratic(c)); },
     .terminal = power_3},
    {.law = SpeedLaw::ngpt,
     .name = "ngpt",
     .parameter_key = "alpha",
     .parameter = &ParticlesConfig::alpha,
     .radial_motion = false,
     .speed = ngpt_speed,
     .initial_velocity = [](const ParticlesConfig& c) { return 2.0 * c.alpha / exp_quadratic(c); },
     .terminal =
         [](const ParticlesConfig& c) {
           return TerminalPrediction{fmt::format("C e^{{-{:g}t}} (2α, ours)", 2.0 * c.alpha),
                                     "exponential", 2.0 * c.alpha};
         }},
    {.law = SpeedLaw::sqrt_scaling,
     .name = "sqrt_scaling",
     .parameter_key = nullptr,
     .parameter = nullptr,
     .radial_motion = false,
     .speed = sqrt_speed,
     .initial_velocity = [](const ParticlesConfig& c) { return 2.0 / exp_linear(c); },
     .terminal =
         [](const ParticlesConfig&) {
           return TerminalPrediction{"C e^{-4 sqrt t}/sqrt t", "stretched exponential", 4.0};
         }},
}};

}  // namespace

const SpeedLawRow& speed_law_row(SpeedLaw law) {
  return kSpeedLaws[static_cast<size_t>(law)];
}

}  // namespace normlab::particles
