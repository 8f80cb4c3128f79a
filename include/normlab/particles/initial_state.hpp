// Initial directions θ_j(0) of the n tokens, as an (n, d) row-major matrix of unit rows.
//
//   symmetric  n orthonormal vectors (Gram–Schmidt of seeded Gaussian vectors), so every
//              pairwise cosine is 0; needs d ≥ n.
//   random     independent, uniform on the sphere (normalized Gaussian vectors).
//   cone       a seeded centre c uniform on the sphere; θ_j = cos φ_j c + sin φ_j u_j with u_j a
//              uniform unit vector orthogonal to c and φ_j uniform in [0, δ]. Every token lies
//              within angle δ of c (this is not the uniform measure on the cap, which for large d
//              would put almost every token at angle ≈ δ).
//   file       read from `init_file` (array_file.hpp format, shape (n, d)); rows are normalized,
//              a zero row is rejected.
// All radii start at r0.
#pragma once

#include <vector>

#include "normlab/particles/config.hpp"

namespace normlab::particles {

// (n, d) row-major; every row has unit norm. Deterministic in config.seed.
std::vector<double> initial_directions(const ParticlesConfig& config);

}  // namespace normlab::particles
