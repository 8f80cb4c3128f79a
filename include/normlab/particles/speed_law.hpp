// The speed laws of the particle dynamics (docs/particles.md, "The system"; arXiv 2510.22026,
// Table 1), one row each: a normalization scheme regulates token j's angular speed by a factor
// 1/s_j(t) and moves its radius by dr_j/dt,
//
//     law           1/s_j(t)             dr_j/dt
//     post          1                    0
//     pre           1/r_j                ⟨θ_j, A_j⟩
//     mix(τ)        post for t ≤ τ, pre after
//     peri          1/(r_j |A_j|)        ⟨θ_j, A_j⟩ / |A_j|
//     ngpt(α)       α / |A_j|            0
//     sqrt_scaling  1/sqrt(t + 1)        0
//
// The n-particle dynamics, the scalar reduction, the closed-form predictions, the names and the
// command line all read these rows.
#pragma once

#include <string>

#include "normlab/particles/config.hpp"

namespace normlab::particles {

// What a law reads at token j: its radius r_j, ⟨θ_j, A_j⟩, |A_j|, the time t and ngpt's α.
struct TokenTerms {
  double r, dot, norm, t, alpha;
};

// 1/s_j(t) and dr_j/dt of one token.
struct TokenSpeed {
  double inv_s = 1.0, radial = 0.0;
};

// The terminal law of dγ/dt predicted for a law (arXiv 2510.22026 table; ngpt's rate is our
// derivation for constant α, see docs/particles.md).
struct TerminalPrediction {
  std::string law;   // e.g. "C e^{-2t}", "C/t^3"
  std::string kind;  // "exponential", "power law" or "stretched exponential"
  double value = 0;  // the rate (exponential), exponent (power law) or κ of
                     // C e^{-κ sqrt t}/sqrt t (stretched exponential)
};

struct SpeedLawRow {
  SpeedLaw law;
  const char* name;  // as written on the command line and in experiment files (key "scheme")
  // The law's parameter, its key and config field: mix's tau, ngpt's alpha; null for none.
  const char* parameter_key;
  double ParticlesConfig::*parameter;
  bool radial_motion;  // the radii move (in some phase)
  // 1/s_j and dr_j/dt at one token. mix's phases are resolved before (post before τ, pre
  // after), so its own entry is post's.
  TokenSpeed (*speed)(const TokenTerms& token);
  // dγ/dt at t = 0 under symmetric initialization with Q = K = V = I, in closed form (docs):
  //   post, sqrt_scaling, mix(τ > 0): 2 / (e^β + n − 1)
  //   pre, mix(τ = 0):                2 / (r0 (e^β + n − 1))
  //   peri:                           2 / (r0 sqrt(e^{2β} + n − 1))
  //   ngpt(α):                        2α / sqrt(e^{2β} + n − 1)
  double (*initial_velocity)(const ParticlesConfig& config);
  TerminalPrediction (*terminal)(const ParticlesConfig& config);
};

// The row of `law`.
const SpeedLawRow& speed_law_row(SpeedLaw law);

// The closed forms of config's law (its row's initial_velocity and terminal).
inline double predicted_initial_velocity(const ParticlesConfig& config) {
  return speed_law_row(config.scheme).initial_velocity(config);
}
inline TerminalPrediction predicted_terminal(const ParticlesConfig& config) {
  return speed_law_row(config.scheme).terminal(config);
}

}  // namespace normlab::particles
