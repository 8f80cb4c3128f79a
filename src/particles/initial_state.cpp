#include "normlab/particles/initial_state.hpp"

#include <fmt/format.h>

#include <cmath>

#include "normlab/base/errors.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/particles/array_file.hpp"

namespace normlab::particles {

namespace {

double dot(const double* a, const double* b, int d) {
  double s = 0;
  for (int i = 0; i < d; ++i) s += a[i] * b[i];
  return s;
}

// Scales a row to unit norm; returns its norm before scaling.
double normalize(double* a, int d) {
  const double norm = std::sqrt(dot(a, a, d));
  if (norm > 0) {
    for (int i = 0; i < d; ++i) a[i] /= norm;
  }
  return norm;
}

void gaussian_row(Rng& rng, double* a, int d) {
  for (int i = 0; i < d; ++i) a[i] = rng.normal();
}

// Uniform direction orthogonal to the unit vector c.
void tangent_direction(Rng& rng, const double* c, double* u, int d) {
  for (;;) {
    gaussian_row(rng, u, d);
    const double proj = dot(u, c, d);
    for (int i = 0; i < d; ++i) u[i] -= proj * c[i];
    if (normalize(u, d) > 1e-8) return;
  }
}

}  // namespace

std::vector<double> initial_directions(const ParticlesConfig& c) {
  const int n = c.n, d = c.d;
  std::vector<double> theta(static_cast<size_t>(n) * d);
  Rng rng(c.seed);
  switch (c.init) {
    case InitKind::symmetric: {
      if (d < n) {
        throw UsageError(fmt::format("--init symmetric needs d >= n, got n={} and d={}", n, d));
      }
      // Gram–Schmidt, each row orthogonalized twice ("twice is enough") so that the Gram
      // matrix is the identity to rounding.
      for (int j = 0; j < n; ++j) {
        double* row = &theta[static_cast<size_t>(j) * d];
        for (;;) {
          gaussian_row(rng, row, d);
          for (int pass = 0; pass < 2; ++pass) {
            for (int k = 0; k < j; ++k) {
              const double* prev = &theta[static_cast<size_t>(k) * d];
              const double proj = dot(row, prev, d);
              for (int i = 0; i < d; ++i) row[i] -= proj * prev[i];
            }
          }
          if (normalize(row, d) > 1e-6) break;
        }
      }
      break;
    }
    case InitKind::random:
      for (int j = 0; j < n; ++j) {
        double* row = &theta[static_cast<size_t>(j) * d];
        do gaussian_row(rng, row, d);
        while (normalize(row, d) == 0);
      }
      break;
    case InitKind::cone: {
      std::vector<double> centre(d), u(d);
      do gaussian_row(rng, centre.data(), d);
      while (normalize(centre.data(), d) == 0);
      for (int j = 0; j < n; ++j) {
        const double phi = c.delta * rng.uniform();
        tangent_direction(rng, centre.data(), u.data(), d);
        double* row = &theta[static_cast<size_t>(j) * d];
        for (int i = 0; i < d; ++i) row[i] = std::cos(phi) * centre[i] + std::sin(phi) * u[i];
        normalize(row, d);
      }
      break;
    }
    case InitKind::file: {
      TextArray array = read_text_array(c.init_file, {n, d}, "initial directions (n, d)");
      theta = std::move(array.values);
      for (int j = 0; j < n; ++j) {
        if (normalize(&theta[static_cast<size_t>(j) * d], d) == 0) {
          throw UsageError(
              fmt::format("{}: row {} of the initial directions is zero (a token "
                          "needs a direction)",
                          c.init_file, j + 1));
        }
      }
      break;
    }
  }
  return theta;
}

}  // namespace normlab::particles
