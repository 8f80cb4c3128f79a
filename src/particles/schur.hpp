// Real Schur decomposition through LAPACK (dgees, shipped inside OpenBLAS). Internal to the
// particle simulator.
#pragma once

#include <vector>

namespace normlab::particles {

struct RealSchur {
  std::vector<double> o;  // (d, d) row-major, orthogonal
  std::vector<double> t;  // (d, d) row-major, quasi-upper-triangular (1×1 and 2×2 diagonal blocks)
};

// a (d, d) row-major = O T Oᵀ. Throws std::runtime_error if LAPACK reports a failure.
RealSchur real_schur(const std::vector<double>& a, int d);

}  // namespace normlab::particles
