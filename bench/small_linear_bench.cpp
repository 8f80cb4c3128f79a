// The small linear layers alone (src/core/kernels/small_linear.hpp) at the shapes of the minimal
// preset's step (`normlab bench train --preset minimal`: D = 15, one head, V = 16, batch 64 × 16
// = 1024 rows): the q, k, v projection (15 → 45), the output projection (15 → 15) and the
// unembedding (15 → 16), forward and backward.
//
//   normlab_small_linear_bench
//
// Prints the best of 20 rounds of 200 calls per kernel in µs, with its rate in GFLOP/s, and the
// total per training step. One thread. Values are random; nothing is checked (the kernel tests do
// that).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "core/kernels/small_linear.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// The best time of one call of f, in µs.
template <typename F>
double best_microseconds(F&& f) {
  constexpr int kRounds = 20, kCalls = 200;
  double best = 1e30;
  for (int round = 0; round < kRounds; ++round) {
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < kCalls; ++i) f();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, seconds / kCalls * 1e6);
  }
  return best;
}

struct LayerShape {
  int in, out;
  const char* name;
};

}  // namespace

int main() {
  constexpr int kRows = 1024;
  const LayerShape layers[] = {{15, 45, "qkv"}, {15, 15, "output"}, {15, 16, "unembedding"}};
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  double total = 0;
  for (const LayerShape& layer : layers) {
    // x (R, C), weight (OC, C), y and dy (R, OC), dx (R, C), dweight (OC, C)
    std::vector<float> x(size_t(kRows) * layer.in), weight(size_t(layer.out) * layer.in);
    std::vector<float> y(size_t(kRows) * layer.out), dy(size_t(kRows) * layer.out);
    std::vector<float> dx(size_t(kRows) * layer.in), dweight(size_t(layer.out) * layer.in);
    for (std::vector<float>* v : {&x, &weight, &dy}) {
      for (float& e : *v) e = normal(rng);
    }
    normlab::LinearShape shape;
    shape.rows = kRows;
    shape.in = layer.in;
    shape.out = layer.out;
    const double forward = best_microseconds(
        [&] { normlab::small_linear_forward(x.data(), weight.data(), y.data(), shape); });
    const double backward = best_microseconds([&] {
      normlab::small_linear_backward(x.data(), weight.data(), dy.data(), dx.data(), dweight.data(),
                                     shape);
    });
    const double flop = 2.0 * kRows * layer.in * layer.out;  // of the forward; the backward twice
    std::printf("%-12s forward %6.2f us (%5.1f GFLOP/s)   backward %6.2f us (%5.1f GFLOP/s)\n",
                layer.name, forward, flop / forward * 1e-3, backward, 2 * flop / backward * 1e-3);
    total += forward + backward;
  }
  std::printf("total %.1f us per training step\n", total);
  return 0;
}
