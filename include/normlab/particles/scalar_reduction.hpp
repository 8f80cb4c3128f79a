// The scalar reduction of the dynamics under symmetric initialization with Q = K = V = I
// (derivation in docs/particles.md). All pairwise cosines equal γ(t) and all radii equal r(t);
// with ε = 1 − γ, b = 1 / (e^{βε} + n − 1) (the weight of each other token) and
//
//     ⟨θ_j, A_j⟩ = b (e^{βε} + (n−1)(1−ε))
//     ‖A_j‖²     = b² (e^{2βε} + 2 e^{βε} (n−1)(1−ε) + (n−1)(1 + (n−2)(1−ε)))
//     ‖P A_j‖    = b sqrt((n−1) ε (n − (n−1)ε))
//
// the state (ε, r) follows
//
//     dε/dt = −(2 / s) · b · ε · (n − (n−1) ε),     dr/dt = the scheme's radial law,
//
// with s and dr/dt from the speed law (speed_law.hpp) evaluated with the quantities above. The
// state is ε rather than γ so that 1 − γ keeps its relative precision near consensus.
#pragma once

#include <string>
#include <vector>

#include "normlab/particles/config.hpp"
#include "normlab/particles/integrators.hpp"
#include "normlab/particles/observables.hpp"
#include "normlab/particles/speed_law.hpp"

namespace normlab::particles {

class ScalarSystem final : public OdeSystem {
 public:
  // Requires has_scalar_reduction(config).
  explicit ScalarSystem(const ParticlesConfig& config);

  size_t size() const override { return 2; }
  std::vector<double> breakpoints() const override;
  void rhs(double t, int segment, const double* y, double* dy) override;

  // (ε, r) at t = 0: orthonormal tokens, ε = 1.
  std::vector<double> initial_state() const { return {1.0, config_.r0}; }

  // The observables of the n-particle system that this scalar state represents.
  Observation observe(double t, const double* y, const double* dy) const;

 private:
  struct Terms {
    double b, dot, norm, tangent, inv_s, radial;
  };
  Terms terms(double t, int segment, double eps, double r) const;

  ParticlesConfig config_;
};

}  // namespace normlab::particles
