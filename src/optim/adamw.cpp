#include "normlab/optim/adamw.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/kernels/block16.hpp"
#include "core/parallel.hpp"

namespace normlab {

AdamW::AdamW(const ParamLayout& layout, const AdamWConfig& config, bool allow_weight_decay)
    : config_(config),
      m_(layout.total(), 0.0f),
      v_(layout.total(), 0.0f),
      decay_(layout.total(), 0.0f) {
  if (!allow_weight_decay) return;
  for (const TensorSpec& t : layout.tensors()) {
    if (!t.decay) continue;
    for (int64_t i = t.offset; i < t.offset + t.size; ++i) {
      decay_[i] = static_cast<float>(config.weight_decay);
    }
  }
}

namespace {
// Elements per task of the optimizer's loops. Fixed, so the norm's partial sums, and with them
// every bit, do not depend on the thread count.
constexpr int64_t kValuesPerTask = 16384;
}  // namespace

double global_norm(const std::vector<float>& g) {
  const int64_t n = static_cast<int64_t>(g.size());
  const int64_t blocks = shard_count(n, kValuesPerTask);
  std::vector<double> partial(blocks, 0.0);
  parallel_for(blocks, [&](int64_t b) {
    const int64_t begin = b * kValuesPerTask, end = std::min(n, (b + 1) * kValuesPerTask);
    const float* __restrict gb = g.data();
    // Element i to lane i mod 16 within the block (16 independent sums, so the loop is not
    // one chain of dependent additions), then block16.hpp's fixed pairwise reduction. The 16
    // double lanes are two halves of 8 (one AVX-512 register each: as one 16-lane vector GCC
    // kept them on the stack), each filled by one float-to-double conversion (built lane by
    // lane, the block went through the stack: ~0.9 ms per step at 10^6 parameters;
    // docs/performance-log.md, "Bit-identical fixes found by profiling the studies"). The bits
    // are those of the 16-lane loop.
    typedef float Float8 __attribute__((vector_size(8 * sizeof(float))));
    typedef double Double8 __attribute__((vector_size(8 * sizeof(double))));
    Double8 low = {}, high = {};
    int64_t i = begin;
    for (; i + kBlock <= end; i += kBlock) {
      Float8 a, b;
      std::memcpy(&a, gb + i, sizeof(a));
      std::memcpy(&b, gb + i + 8, sizeof(b));
      const Double8 x = __builtin_convertvector(a, Double8);
      const Double8 y = __builtin_convertvector(b, Double8);
      low += x * x;
      high += y * y;
    }
    const Block16<double> lanes =
        __builtin_shufflevector(low, high, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    double tail = 0;
    for (; i < end; ++i) tail += static_cast<double>(gb[i]) * gb[i];
    partial[b] = sum_of_lanes<double>(lanes) + tail;
  });
  double ss = 0;
  for (double p : partial) ss += p;
  return std::sqrt(ss);
}

double AdamW::step(std::vector<float>& params, const std::vector<float>& grads, double lr) {
  const double norm = global_norm(grads);
  if (!std::isfinite(norm)) return norm;  // nothing is updated; the caller stops
  float clip = 1.0f;
  if (config_.clip_norm > 0 && norm > config_.clip_norm) {
    clip = static_cast<float>(config_.clip_norm / (norm + 1e-6));
  }
  ++t_;
  const float b1 = static_cast<float>(config_.beta1), b2 = static_cast<float>(config_.beta2);
  const double bc1 = 1.0 - std::pow(config_.beta1, static_cast<double>(t_));
  const double bc2 = 1.0 - std::pow(config_.beta2, static_cast<double>(t_));
  const float step_size = static_cast<float>(lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  const float eps = static_cast<float>(config_.eps);
  const float lr_f = static_cast<float>(lr);
  const int64_t n = static_cast<int64_t>(params.size());
  float* p = params.data();
  const float* g = grads.data();
  float* m = m_.data();
  float* v = v_.data();
  const float* wd = decay_.data();
  parallel_for(shard_count(n, kValuesPerTask), [&](int64_t b) {
    // Local bounds, pointers and constants: stores through p, m and v could alias the lambda's
    // captures, and a value re-read in every iteration keeps GCC from vectorizing the loop.
    const int64_t begin = b * kValuesPerTask, end = std::min(n, (b + 1) * kValuesPerTask);
    float* __restrict pb = p;
    float* __restrict mb = m;
    float* __restrict vb = v;
    const float* __restrict gb = g;
    const float* __restrict wdb = wd;
    const float c = clip, lr_c = lr_f, b1_c = b1, b2_c = b2, step_c = step_size;
    const float bc2_c = inv_sqrt_bc2, eps_c = eps;
    for (int64_t i = begin; i < end; ++i) {
      const float gi = gb[i] * c;
      pb[i] *= 1.0f - lr_c * wdb[i];
      mb[i] = b1_c * mb[i] + (1.0f - b1_c) * gi;
      vb[i] = b2_c * vb[i] + (1.0f - b2_c) * gi * gi;
      pb[i] -= step_c * mb[i] / (std::sqrt(vb[i]) * bc2_c + eps_c);
    }
  });
  return norm;
}

}  // namespace normlab
