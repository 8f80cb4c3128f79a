// The small model the layout and scheme tests build: V = 9, D = 8, 2 heads, 2 layers, MLP 2×,
// weights drawn with std 0.3 (large enough that every norm and branch is far from zero). Tests
// set what they vary on the returned config. And the message a config's validation gives.
#pragma once

#include <string>

#include "normlab/base/errors.hpp"
#include "normlab/model/model_config.hpp"

namespace normlab::testing {

inline ModelConfig small_model_config(Scheme scheme) {
  ModelConfig c;
  c.vocab = 9;
  c.width = 8;
  c.heads = 2;
  c.layers = 2;
  c.mlp_mult = 2;
  c.init_std = 0.3;
  c.scheme = scheme;
  return c;
}

// The same with norm kind `norm`.
inline ModelConfig small_model_config(Scheme scheme, NormKind norm) {
  ModelConfig c = small_model_config(scheme);
  c.norm = norm;
  return c;
}

// The evaluator tests' model: D = 8, 2 heads, 1 layer, the defaults otherwise, V = vocab.
inline ModelConfig tiny_model_config(int vocab) {
  ModelConfig c;
  c.vocab = vocab;
  c.width = 8;
  c.heads = 2;
  c.layers = 1;
  return c;
}

// validate(c)'s UsageError message, or "" when c is valid.
inline std::string validation_error(const ModelConfig& c) {
  try {
    validate(c);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace normlab::testing
