// The AttnRes mixture kernels alone (src/core/kernels/attnres.hpp), in the pattern of one
// training step of block_attnres(2) at L = 32, D = 64, batch 32 × 64 (docs/attnres.md): 33 groups
// of P = 2 mixing points over K = 1..33 shared block sums, N = 2048 rows.
//
//   normlab_res_mix_bench [ROWS [SETS [POINTS]]]
//
// ROWS (default 2048) rows per source; SETS (default 8) copies of the 34 sources, used in turn
// so that a sweep does not find the previous sweep's sources in the caches (8 × 34 sources and
// their gradients of 512 KB are 278 MB; SETS = 1 with ROWS = 32 keeps everything in L2). POINTS
// (default 2) mixing points share each set of K sources in one backward call (the training
// step's backward runs chunks of 8 points: POINTS = 8). Prints the best of 7 sweeps (after one
// warm-up), in ms per 2048 rows, for the forward of the 33 × POINTS points and the backward of
// the 33 calls, and both in ns per (row, point, source). One thread. Values are random; nothing
// is checked (the kernel tests do that).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/kernels/attnres.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  using normlab::ResMixPoint;
  const int N = argc > 1 ? std::atoi(argv[1]) : 2048;
  const int sets = argc > 2 ? std::atoi(argv[2]) : 8;
  const int P = argc > 3 ? std::atoi(argv[3]) : 2;
  if (N < 1 || sets < 1 || P < 1) {
    std::fprintf(stderr, "usage: normlab_res_mix_bench [ROWS >= 1 [SETS >= 1 [POINTS >= 1]]]\n");
    return 2;
  }
  constexpr int D = 64, kSourcesPerSet = 34, kMaxShared = 33;
  const int sources = kSourcesPerSet * sets;

  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  // sources, their gradients (N, D) and their r (N)
  std::vector<std::vector<float>> src(sources, std::vector<float>(size_t(N) * D));
  std::vector<std::vector<float>> dsrc(sources, std::vector<float>(size_t(N) * D));
  std::vector<std::vector<float>> rstd(sources, std::vector<float>(N));
  for (auto& s : src) {
    for (float& v : s) v = normal(rng);
  }
  for (int i = 0; i < sources; ++i) normlab::res_rstd(src[i].data(), rstd[i].data(), N, D, 1e-6);
  // the points' query, gain and their gradients (D); outputs (N, D), α (N, K), dx (N, D)
  std::vector<float> w(D), g(D, 1.0f), dw(D), dg(D);
  for (float& v : w) v = 0.1f * normal(rng);
  std::vector<std::vector<float>> x(P, std::vector<float>(size_t(N) * D));
  std::vector<std::vector<float>> dx(P, std::vector<float>(size_t(N) * D));
  std::vector<std::vector<float>> alpha(P, std::vector<float>(size_t(N) * kMaxShared));
  for (auto& d : dx) {
    for (float& v : d) v = normal(rng);
  }

  double best_forward = 1e30, best_backward = 1e30;
  for (int sweep = 0; sweep < 8; ++sweep) {
    double forward = 0, backward = 0;
    for (int K = 1; K <= kMaxShared; ++K) {
      const int first = kSourcesPerSet * (K % sets);  // this group's set of sources
      std::vector<const float*> s(K), r(K);
      std::vector<float*> ds(K);
      for (int k = 0; k < K; ++k) {
        s[k] = src[first + k].data();
        r[k] = rstd[first + k].data();
        ds[k] = dsrc[first + k].data();
      }
      Clock::time_point t0 = Clock::now();
      for (int p = 0; p < P; ++p) {
        normlab::res_mix_forward(s.data(), r.data(), K, w.data(), g.data(), x[p].data(),
                                 alpha[p].data(), N, D);
      }
      forward += seconds_since(t0);
      std::vector<ResMixPoint<float>> points(P);
      for (int p = 0; p < P; ++p) {
        points[p].alpha = alpha[p].data();
        points[p].alpha_stride = K;
        points[p].x = x[p].data();
        points[p].dx = dx[p].data();
        points[p].w = w.data();
        points[p].g = g.data();
        points[p].dw = dw.data();
        points[p].dg = dg.data();
      }
      t0 = Clock::now();
      normlab::res_mix_backward(s.data(), r.data(), ds.data(), K, points.data(), P, N, D);
      backward += seconds_since(t0);
    }
    if (sweep > 0) {
      best_forward = std::min(best_forward, forward);
      best_backward = std::min(best_backward, backward);
    }
  }
  const double per_2048_rows = 2048.0 / N * 1e3;
  // (row, point, source) triples of a sweep: Σ_{K=1..33} K = 561 per row and point
  const double triples = double(N) * P * (kMaxShared * (kMaxShared + 1) / 2);
  std::printf(
      "rows %d, sets %d, points %d: forward %.1f ms, backward %.1f ms per 2048 rows (best of 7); "
      "%.2f and %.2f ns per (row, point, source)\n",
      N, sets, P, best_forward * per_2048_rows, best_backward * per_2048_rows,
      best_forward / triples * 1e9, best_backward / triples * 1e9);
  return 0;
}
