// What is recorded at each recording time of a particle simulation (one CSV row).
//
// With unit directions θ_j, θ̄ = (1/n) Σ θ_j and Var = (1/n) Σ ‖θ_j − θ̄‖² (within-cluster
// variance), the mean pairwise cosine over ordered pairs i ≠ j is exactly
//     mean_cos = 1 − n/(n−1) · Var,
// so 1 − mean_cos is computed from the differences θ_j − θ̄ and keeps its relative precision
// near consensus (where 1 − mean_cos ≪ 1e-16 is common). Likewise its time derivative is
//     d(mean_cos)/dt = −2/(n−1) · Σ_j ⟨θ_j − θ̄, dθ_j/dt⟩,
// computed from the right-hand side, not by differencing recorded rows.
#pragma once

#include <string>
#include <vector>

namespace normlab::particles {

struct Observation {
  double t = 0;
  double mean_cos = 0;               // mean of ⟨θ_i, θ_j⟩ over pairs i ≠ j
  double min_cos = 0;                // minimum of ⟨θ_i, θ_j⟩ over pairs i ≠ j
  double variance = 0;               // (1/n) Σ ‖θ_j − θ̄‖²
  double mean_radius = 0;            // (1/n) Σ r_j
  double mean_speed = 0;             // (1/n) Σ ‖dθ_j/dt‖ (angular speed)
  double dcos_dt = 0;                // d(mean_cos)/dt, the paper's "velocity" γ̇
  double one_minus_mean_cos = 0;     // 1 − mean_cos without cancellation
  double mean_angle_from_start = 0;  // mean over j of the angle between θ_j(t) and θ_j(0), radians
};

// Observables of the n-particle state y = [Θ (n, d), r (n)] and its derivative dy; y0 is the
// state at t = 0 (for mean_angle_from_start; nullptr gives 0). `work` is a scratch buffer
// (resized on first use).
Observation observe_particles(int n, int d, double t, const double* y, const double* dy,
                              const double* y0, std::vector<double>& work);

// Column names and rows, comma-separated, header first ("t,mean_cos,min_cos,variance,
// mean_radius,mean_speed,dcos_dt,one_minus_mean_cos,mean_angle_from_start").
std::string observations_csv(const std::vector<Observation>& rows);

}  // namespace normlab::particles
