// One training step's observable outputs of a float model built from a config: its tensor
// names, parameters after init, logits of a fixed batch and gradients of a fixed dlogits. Two
// configs that describe the same model give equal Outputs bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"

namespace normlab::testing {

struct ModelOutputs {
  std::vector<std::string> names;
  std::vector<float> params, logits, grads;
};

inline ModelOutputs run_once(const ModelConfig& c) {
  Model<float> m(c);
  m.init(7);
  Rng rng(3);
  const int64_t B = 2, T = 5;
  std::vector<int32_t> tokens(B * T);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng.below(c.vocab));
  const float* logits = m.forward(tokens.data(), B, T);
  ModelOutputs out;
  out.logits.assign(logits, logits + B * T * c.vocab);
  std::vector<float> dlogits(out.logits.size());
  for (size_t i = 0; i < dlogits.size(); ++i) dlogits[i] = static_cast<float>(i % 7) - 3.0f;
  m.zero_grads();
  m.backward(dlogits.data());
  out.params = m.params();
  out.grads = m.grads();
  for (const auto& t : m.layout().tensors()) out.names.push_back(t.name);
  return out;
}

}  // namespace normlab::testing
