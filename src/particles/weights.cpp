#include "normlab/particles/weights.hpp"

#include <cmath>

#include "normlab/particles/array_file.hpp"
#include "normlab/rng.hpp"

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
  const double stddev = c.qkv == QkvKind::kaiming ? std::sqrt(2.0 / c.d) : std::sqrt(1.0 / c.d);
  Rng rng(c.seed ^ 0x5eedc0ffee123457ULL);
  for (HeadWeights& head : w.heads) {
    for (std::vector<double>* m : {&head.q, &head.k, &head.v}) {
      m->resize(dd);
      for (double& x : *m) x = stddev * rng.normal();
    }
  }
  return w;
}

}  // namespace normlab::particles
