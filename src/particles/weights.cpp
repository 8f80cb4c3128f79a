#include "normlab/particles/weights.hpp"

#include <cmath>

#include "normlab/base/rng.hpp"
#include "normlab/particles/array_file.hpp"

namespace normlab::particles {

Weights make_weights(const ParticlesConfig& c) {
  Weights w;
  w.d = c.d;
  if (c.qkv == QkvKind::identity) return w;
  w.identity = false;
  const size_t dd = static_cast<size_t>(c.d) * c.d;
  w.heads.resize(static_cast<size_t>(c.heads));
  if (c.qkv == QkvKind::file) {
    TextArray array =
        read_text_array(c.qkv_file, {c.heads, 3, c.d, c.d}, "Q/K/V matrices (heads, 3, d, d)");
    for (int h = 0; h < c.heads; ++h) {
      const double* base = &array.values[static_cast<size_t>(h) * 3 * dd];
      w.heads[h].q.assign(base, base + dd);
      w.heads[h].k.assign(base + dd, base + 2 * dd);
      w.heads[h].v.assign(base + 2 * dd, base + 3 * dd);
    }
    return w;
  }
  return make_random_layer_weights(c, 0);
}

uint64_t layer_stream_seed(uint64_t seed, int layer) {
  // Rng seeds through SplitMix64, so consecutive seeds give unrelated streams.
  return (seed ^ 0x5eedc0ffee123457ULL) + static_cast<uint64_t>(layer) * 0x9e3779b97f4a7c15ULL;
}

Weights make_random_layer_weights(const ParticlesConfig& c, int layer) {
  Weights w;
  w.d = c.d;
  w.identity = false;
  w.heads.resize(static_cast<size_t>(c.heads));
  const size_t dd = static_cast<size_t>(c.d) * c.d;
  const double stddev = c.qkv == QkvKind::kaiming ? std::sqrt(2.0 / c.d) : std::sqrt(1.0 / c.d);
  Rng rng(layer_stream_seed(c.seed, layer));
  for (HeadWeights& head : w.heads) {
    for (std::vector<double>* m : {&head.q, &head.k, &head.v}) {
      m->resize(dd);
      for (double& x : *m) x = stddev * rng.normal();
    }
  }
  return w;
}

}  // namespace normlab::particles
