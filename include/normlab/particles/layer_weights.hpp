// Q, K, V as a function of depth. Layer k is the unit of depth t ∈ [k, k+1); a randomly
// initialized deep transformer draws every layer's matrices afresh (config.hpp, QkvDepth).
//
//   tied       one Weights for every t (identity, or the depth-tied dynamics)
//   random     layer k drawn on demand from the stream of (seed, k) (weights.hpp), so only the
//              current layer is held: at d = 512 one layer's Q, K, V is 3 × 2 MB
//   list       an explicit list, one Weights per layer: a file of shape
//              (layers, heads, 3, d, d), or the matrices extracted from a trained model
#pragma once

#include <vector>

#include "normlab/particles/config.hpp"
#include "normlab/particles/weights.hpp"

namespace normlab::particles {

class LayerWeights {
 public:
  // As the config says: tied (make_weights), per-layer random, or per-layer file (which must
  // hold at least ceil(t_end) layers; UsageError otherwise).
  static LayerWeights from_config(const ParticlesConfig& config);
  static LayerWeights tied(Weights weights);
  // Layer k = layers[k]; every entry has the same d and head count, none the identity.
  static LayerWeights list(std::vector<Weights> layers);

  bool per_layer() const { return kind_ != Kind::tied; }
  bool identity() const { return kind_ == Kind::tied && tied_.identity; }
  // Layers available: the list's size; otherwise unlimited (-1).
  int layers() const { return kind_ == Kind::list ? static_cast<int>(list_.size()) : -1; }
  // Layer k ≥ 0 (tied: the same for every k). std::out_of_range past a list's end.
  Weights layer(int k) const;

 private:
  enum class Kind { tied, random, list };
  Kind kind_ = Kind::tied;
  ParticlesConfig config_;     // random: seed, d, heads, kind
  Weights tied_;               // tied
  std::vector<Weights> list_;  // list
};

// The per-layer Q/K/V file (layers, heads, 3, d, d) as a list of layers.
std::vector<Weights> read_layer_weights_file(const ParticlesConfig& config);

}  // namespace normlab::particles
