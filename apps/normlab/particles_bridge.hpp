// `normlab particles --from-checkpoint DIR`: the particle ODE with a model's own per-layer
// attention, from its own embeddings, against the depth probe (docs/particles.md, "Bridge to
// trained models").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "normlab/particles/config.hpp"

namespace normlab::cli {

struct ParticlesBridgeOptions {
  std::string checkpoint;                // run directory, its final/, or a checkpoint
  std::string input = "random";          // random or task
  std::string task;                      // --input task: the task (else the run's)
  std::vector<std::string> task_params;  // KEY=VALUE
  int64_t batch = 4;                     // sequences
  int64_t seq_len = 32;                  // random: tokens per sequence; task: the task length
  uint64_t seed = 0;                     // input draw
  std::string csv;                       // layer,predicted_cos,measured_cos
  particles::IntegratorKind integrator = particles::IntegratorKind::rk4;
  double dt = 0.01;     // rk4 step, dopri5 first trial step
  double rtol = 1e-8;   // dopri5
  double atol = 1e-12;  // dopri5
};

void run_particles_bridge(const ParticlesBridgeOptions& options);

}  // namespace normlab::cli
