// The attention matrices Q, K, V of each head (REFERENCE.md §3), each d × d, row-major, acting on
// column vectors: (Q θ)_a = Σ_b Q[a][b] θ_b.
//
//   identity  Q = K = V = I (the paper's analysed setting); no matrix is stored.
//   kaiming   entries i.i.d. N(0, 2/d): Kaiming-normal (He) initialization of a d → d linear map
//             (fan-in d, gain √2), as torch.nn.init.kaiming_normal_ draws it.
//   gaussian  entries i.i.d. N(0, 1/d), so that E‖Qθ‖² = 1.
//   file      a text array of shape (heads, 3, d, d): for each head Q, then K, then V.
// Random draws use their own stream (seed mixed with a constant), so changing --qkv never changes
// the initial directions drawn from the same --seed.
#pragma once

#include <vector>

#include "normlab/particles/config.hpp"

namespace normlab::particles {

struct HeadWeights {
  std::vector<double> q, k, v;  // (d, d) each, row-major
};

struct Weights {
  int d = 0;
  bool identity = true;            // Q = K = V = I for every head (nothing stored)
  std::vector<HeadWeights> heads;  // empty when identity
};

Weights make_weights(const ParticlesConfig& config);

}  // namespace normlab::particles
