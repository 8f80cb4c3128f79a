#include "particles/schur.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <stdexcept>

#include "core/kernels/gemm.hpp"

// LAPACK's Fortran interface; the two trailing arguments are the hidden lengths of the character
// arguments (gfortran calling convention).
extern "C" void dgees_(const char* jobvs, const char* sort,
                       int (*select)(const double*, const double*), const int* n, double* a,
                       const int* lda, int* sdim, double* wr, double* wi, double* vs,
                       const int* ldvs, double* work, const int* lwork, int* bwork, int* info,
                       size_t jobvs_len, size_t sort_len);

namespace normlab::particles {

RealSchur real_schur(const std::vector<double>& a, int d) {
  ensure_blas_single_threaded();  // LAPACK's bits at any core count (core/kernels/gemm.hpp)
  const size_t dd = static_cast<size_t>(d) * d;
  std::vector<double> col(dd), vs(dd), wr(d), wi(d);
  // Column-major copy: element (i, j) at i + j·d.
  for (int i = 0; i < d; ++i) {
    for (int j = 0; j < d; ++j)
      col[i + static_cast<size_t>(j) * d] = a[static_cast<size_t>(i) * d + j];
  }
  std::vector<int> bwork(d);
  int sdim = 0, info = 0, lwork = -1;
  double query = 0;
  dgees_("V", "N", nullptr, &d, col.data(), &d, &sdim, wr.data(), wi.data(), vs.data(), &d, &query,
         &lwork, bwork.data(), &info, 1, 1);
  if (info != 0)
    throw std::runtime_error(fmt::format("dgees workspace query failed: info {}", info));
  lwork = static_cast<int>(query);
  std::vector<double> work(static_cast<size_t>(lwork));
  dgees_("V", "N", nullptr, &d, col.data(), &d, &sdim, wr.data(), wi.data(), vs.data(), &d,
         work.data(), &lwork, bwork.data(), &info, 1, 1);
  if (info != 0)
    throw std::runtime_error(fmt::format("dgees (real Schur form) failed: info {}", info));
  RealSchur out;
  out.o.resize(dd);
  out.t.resize(dd);
  for (int i = 0; i < d; ++i) {
    for (int j = 0; j < d; ++j) {
      out.t[static_cast<size_t>(i) * d + j] = col[i + static_cast<size_t>(j) * d];
      out.o[static_cast<size_t>(i) * d + j] = vs[i + static_cast<size_t>(j) * d];
    }
  }
  return out;
}

}  // namespace normlab::particles
