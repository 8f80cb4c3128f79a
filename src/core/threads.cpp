// The thread count (normlab/core/threads.hpp) that src/core/parallel.hpp shares work among.
#include "normlab/core/threads.hpp"

#include <cblas.h>

#include <algorithm>

namespace normlab {
namespace {
int g_threads = 1;
}

void set_num_threads(int n) {
  g_threads = std::max(1, n);
  // OpenBLAS always runs single-threaded inside our tasks; we parallelize around it.
  openblas_set_num_threads(1);
}

int num_threads() {
  return g_threads;
}

}  // namespace normlab
