#include "normlab/bench/bench_presets.hpp"

#include <fmt/format.h>

#include "normlab/base/errors.hpp"

namespace normlab {

std::vector<std::string> bench_preset_names() {
  return {"minimal", "small", "depth"};
}

BenchPreset bench_preset(const std::string& name) {
  BenchPreset p;
  p.name = name;
  ModelConfig& c = p.model;
  c.causal = true;
  c.tied = false;
  c.pos = PosEncoding::none;
  if (name == "minimal") {
    c.vocab = 16;
    c.width = 15;
    c.layers = 1;
    c.heads = 1;
    c.mlp = false;
    c.scheme = Scheme::post;
    c.norm = NormKind::rmsnorm;
    p.batch = 64;
    p.len = 16;
  } else if (name == "small") {
    c.vocab = 64;
    c.width = 128;
    c.heads = 4;
    c.layers = 4;
    c.mlp = true;
    c.mlp_mult = 4;
    c.scheme = Scheme::pre;
    c.norm = NormKind::layernorm;
    p.batch = 32;
    p.len = 64;
  } else if (name == "depth") {
    c.vocab = 114;  // char_lm's vocabulary
    c.width = 64;
    c.heads = 4;
    c.layers = 16;
    c.mlp = true;
    c.mlp_mult = 4;
    c.activation = Activation::gelu;
    c.pos = PosEncoding::rope;
    c.scheme = Scheme::pre;
    c.norm = NormKind::rmsnorm;
    p.batch = 16;
    p.len = 64;
  } else {
    throw UsageError(fmt::format("unknown preset '{}'; allowed: {}", name,
                                 fmt::join(bench_preset_names(), ", ")));
  }
  return p;
}

}  // namespace normlab
