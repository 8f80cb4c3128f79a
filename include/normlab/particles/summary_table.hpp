// OUT/particles_summary.csv: one machine-readable row per run and seed of a particle study, so
// that a claims ledger reads its numbers from columns of one file. Columns (docs/particles.md,
// "Study files"):
//
//   run, scheme, seed, qkv, qkv_depth, n, d, beta, t_end       what ran
//   initial_dcos_dt, initial_mean_speed                        velocity at t = 0
//   early_t, mean_angle_moved_by_early_t                       how far tokens moved early on
//   fit_t_from, fit_t_to, fit_points                           terminal fit window of dcos/dt
//   exp_rate, power_exponent, stretched_kappa, better_fit      terminal fit rates (fits.hpp)
//   radius_exponent, radius_ci_low, radius_ci_high,            mean_radius − r0 ≈ C t^p
//   radius_fit_points                                          (radius_fit.hpp); empty if none
//   final_mean_radius, final_one_minus_mean_cos                at t_end
//
// A value that does not exist (no fit) is an empty field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "normlab/particles/config.hpp"
#include "normlab/particles/fits.hpp"
#include "normlab/particles/radius_fit.hpp"

namespace normlab::particles {

struct SummaryRow {
  std::string run;    // the run's name (label, or label_seedS)
  std::string label;  // the run's label in the study file, the same for every seed
  ParticlesConfig config;
  double initial_dcos_dt = 0, initial_mean_speed = 0;
  double early_t = 0, early_angle = 0;
  DecayFit fit;
  RadiusFit radius;
  double final_mean_radius = 0, final_one_minus_mean_cos = 0;
};

// Header line and one line per row.
std::string summary_rows_csv(const std::vector<SummaryRow>& rows);

}  // namespace normlab::particles
