// Moves hyper-connections' weights (tensors "layers.L.{attn,mlp}.hc.*") off their inits, so
// that the dynamic weights, the gates and the Sinkhorn projection all carry signal: at init the
// projections are 0 and every stream holds the same values. No-op for the other schemes.
#pragma once

#include <cstdint>
#include <string>

#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

template <typename T>
void randomize_hyper(Model<T>& m, uint64_t seed) {
  Rng rng(seed);
  for (const TensorSpec& t : m.layout().tensors()) {
    if (t.name.find(".hc.") == std::string::npos || t.name.find(".hc.norm.") != std::string::npos) {
      continue;
    }
    const size_t dot = t.name.rfind('.');
    const std::string leaf = t.name.substr(dot + 1);
    for (int64_t i = t.offset; i < t.offset + t.size; ++i) {
      T& v = m.params()[i];
      if (leaf.ends_with("_fn") || leaf.starts_with("phi_")) {
        v = static_cast<T>(0.3 * rng.normal());  // dynamic projections
      } else if (leaf.ends_with("_scale") || leaf.starts_with("alpha_")) {
        v = static_cast<T>(0.5 + 0.2 * rng.normal());  // s_α, s_β; mHC's gates
      } else if (leaf == "b_pre" || leaf == "b_res") {
        v = static_cast<T>(0.7 * rng.normal());  // far from the saturated init (−8)
      } else {
        v += static_cast<T>(0.2 * rng.normal());  // static weights, b_post
      }
    }
  }
}

}  // namespace normlab
