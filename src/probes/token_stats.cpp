#include "normlab/probes/token_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

#include "core/kernels/gemm.hpp"

// LAPACK from OpenBLAS (Debian's libopenblas exports the Fortran symbols; there is no
// lapacke.h in the build dependencies). gfortran passes the length of a character argument
// as a hidden trailing size_t parameter; it is given explicitly.
extern "C" void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda,
                        double* s, double* u, const int* ldu, double* vt, const int* ldvt,
                        double* work, const int* lwork, int* iwork, int* info, size_t jobz_len);

namespace normlab {

double mean_pairwise_cosine(const float* x, int64_t T, int D) {
  std::vector<double> s(D, 0.0);
  int64_t count = 0;
  for (int64_t t = 0; t < T; ++t) {
    const float* row = x + t * D;
    double ss = 0;
    for (int d = 0; d < D; ++d) ss += static_cast<double>(row[d]) * row[d];
    if (!(ss > 0)) continue;
    const double inv = 1.0 / std::sqrt(ss);
    for (int d = 0; d < D; ++d) s[d] += row[d] * inv;
    ++count;
  }
  if (count < 2) return std::numeric_limits<double>::quiet_NaN();
  double s2 = 0;
  for (int d = 0; d < D; ++d) s2 += s[d] * s[d];
  const double n = static_cast<double>(count);
  return (s2 - n) / (n * (n - 1));
}

std::vector<double> singular_values(const float* x, int64_t T, int D) {
  const int64_t k = std::min<int64_t>(T, D);
  if (k <= 0) return {};
  // Row-major X (T, D) is column-major Xᵀ (D, T): the same singular values.
  const int m = D, n = static_cast<int>(T);
  std::vector<double> a(x, x + T * D);
  std::vector<double> sigma(k);
  std::vector<int> iwork(8 * k);
  int info = 0, lwork = -1, one = 1;
  double query = 0, dummy = 0;
  ensure_blas_single_threaded();  // LAPACK's bits at any core count (core/kernels/gemm.hpp)
  dgesdd_("N", &m, &n, a.data(), &m, sigma.data(), &dummy, &one, &dummy, &one, &query, &lwork,
          iwork.data(), &info, 1);
  lwork = std::max(1, static_cast<int>(query));
  std::vector<double> work(lwork);
  dgesdd_("N", &m, &n, a.data(), &m, sigma.data(), &dummy, &one, &dummy, &one, work.data(), &lwork,
          iwork.data(), &info, 1);
  if (info != 0) throw std::runtime_error("LAPACK dgesdd did not converge");
  return sigma;  // descending
}

double effective_rank_of(const std::vector<double>& sigma) {
  double total = 0;
  for (double s : sigma) total += s;
  if (!(total > 0)) return std::numeric_limits<double>::quiet_NaN();
  double h = 0;
  for (double s : sigma) {
    const double p = s / total;
    if (p > 0) h -= p * std::log(p);
  }
  return std::exp(h);
}

double effective_rank(const float* x, int64_t T, int D) {
  return effective_rank_of(singular_values(x, T, D));
}

}  // namespace normlab
