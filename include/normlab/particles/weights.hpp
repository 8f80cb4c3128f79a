// The attention matrices Q, K, V of each head (docs/particles.md), each d × d, row-major, acting on
// column vectors: (Q θ)_a = Σ_b Q[a][b] θ_b.
//
//   identity  Q = K = V = I (the paper's analysed setting); no matrix is stored.
//   kaiming   entries i.i.d. N(0, 2/d): Kaiming-normal (He) initialization of a d → d linear map
//             (fan-in d, gain √2), as torch.nn.init.kaiming_normal_ draws it.
//   gaussian  entries i.i.d. N(0, 1/d), so that E‖Qθ‖² = 1.
//   file      a text array of shape (heads, 3, d, d): for each head Q, then K, then V.
// Random draws use their own stream (seed mixed with a constant), so changing --qkv never changes
// the initial directions drawn from the same --seed. With per-layer weights (config.hpp,
// QkvDepth), layer k draws from its own stream derived from the seed and k (layer 0's stream is
// the tied one), so a layer's matrices do not depend on how many steps the integrator took.
#pragma once

#include <cstdint>
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

// Depth-tied weights (the only ones for identity): heads × (Q, K, V) from the seed or the file.
Weights make_weights(const ParticlesConfig& config);

// Layer k's random weights (kaiming or gaussian) from the stream of (seed, k).
Weights make_random_layer_weights(const ParticlesConfig& config, int layer);

// The seed of layer k's stream; layer 0 gives the tied weights' stream.
uint64_t layer_stream_seed(uint64_t seed, int layer);

}  // namespace normlab::particles
