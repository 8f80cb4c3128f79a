#include "normlab/particles/layer_weights.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "normlab/base/errors.hpp"
#include "normlab/particles/array_file.hpp"

namespace normlab::particles {

LayerWeights LayerWeights::from_config(const ParticlesConfig& c) {
  if (!per_layer_qkv(c)) return tied(make_weights(c));
  if (c.qkv == QkvKind::file) {
    std::vector<Weights> layers = read_layer_weights_file(c);
    const double needed = std::ceil(c.t_end);
    if (static_cast<double>(layers.size()) < needed) {
      throw UsageError(fmt::format(
          "{}: {} layers of Q, K, V, but --t-end {} needs {} (one layer per unit of depth)",
          c.qkv_file, layers.size(), c.t_end, needed));
    }
    return list(std::move(layers));
  }
  LayerWeights w;
  w.kind_ = Kind::random;
  w.config_ = c;
  return w;
}

LayerWeights LayerWeights::tied(Weights weights) {
  LayerWeights w;
  w.kind_ = Kind::tied;
  w.tied_ = std::move(weights);
  return w;
}

LayerWeights LayerWeights::list(std::vector<Weights> layers) {
  if (layers.empty()) throw std::invalid_argument("LayerWeights::list: no layers");
  LayerWeights w;
  w.kind_ = Kind::list;
  w.list_ = std::move(layers);
  return w;
}

Weights LayerWeights::layer(int k) const {
  switch (kind_) {
    case Kind::tied:
      return tied_;
    case Kind::random:
      return make_random_layer_weights(config_, k);
    case Kind::list:
      if (k < 0 || k >= static_cast<int>(list_.size())) {
        throw std::out_of_range(
            fmt::format("layer {} of Q, K, V asked; {} layers are stored", k, list_.size()));
      }
      return list_[static_cast<size_t>(k)];
  }
  return tied_;
}

std::vector<Weights> read_layer_weights_file(const ParticlesConfig& c) {
  const TextArray array = read_text_array(c.qkv_file, {-1, c.heads, 3, c.d, c.d},
                                          "per-layer Q/K/V matrices (layers, heads, 3, d, d)");
  const size_t dd = static_cast<size_t>(c.d) * c.d;
  std::vector<Weights> layers(static_cast<size_t>(array.shape[0]));
  const double* base = array.values.data();
  for (Weights& w : layers) {
    w.d = c.d;
    w.identity = false;
    w.heads.resize(static_cast<size_t>(c.heads));
    for (HeadWeights& head : w.heads) {
      head.q.assign(base, base + dd);
      head.k.assign(base + dd, base + 2 * dd);
      head.v.assign(base + 2 * dd, base + 3 * dd);
      base += 3 * dd;
    }
  }
  return layers;
}

}  // namespace normlab::particles
