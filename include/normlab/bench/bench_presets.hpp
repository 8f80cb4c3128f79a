// The benchmark presets, mirrored by bench/twin.py --bench (keep the two in step).
//   minimal: V = 16, D = 15, L = 1, H = 1, attention only, no positions, T = 16, batch 64,
//            post scheme with rmsnorm (the minimal model of 2510.08341)
//   small:   V = 64, D = 128, H = 4, L = 4, MLP 4x, T = 64, batch 32, pre with layernorm
//   depth:   the depth study's model (experiments/depth_charlm_L16.toml): V = 114 (char_lm),
//            D = 64, H = 4, L = 16, MLP 4x GELU, RoPE, T = 64, batch 16, pre with rmsnorm
#pragma once

#include <string>
#include <vector>

#include "normlab/model/model_config.hpp"

namespace normlab {

struct BenchPreset {
  std::string name;
  ModelConfig model;
  int64_t batch = 0;
  int64_t len = 0;
};

// Throws UsageError listing the presets for an unknown name.
BenchPreset bench_preset(const std::string& name);
std::vector<std::string> bench_preset_names();

}  // namespace normlab
