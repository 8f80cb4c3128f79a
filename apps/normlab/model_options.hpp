// The model options shared by every subcommand that builds a model (init, bench ...).
//
// Names: --scheme, --norm, --vocab, --width, --heads, --layers, --mlp/--no-mlp, --mlp-mult,
// --activation, --pos, --max-len, --causal/--bidirectional, --beta, --mix-layers,
// --block-size, --tied/--untied, --final-norm/--no-final-norm,
// --embed-norm/--no-embed-norm, --init-std, --scaled-init/--no-scaled-init,
// --attn-norms, --mlp-norms.
#pragma once

#include <CLI/CLI.hpp>

#include "normlab/model_config.hpp"

namespace normlab::cli {

struct ModelOptions {
  ModelConfig config;
  std::string scheme = "pre";
  std::string norm;  // empty: the scheme's default (rmsnorm; l2 for ngpt)
  std::string pos = "none";
  std::string activation = "gelu";
  std::string attn_norms = "auto";  // placement override (docs/schemes.md)
  std::string mlp_norms = "auto";
  bool final_norm = false;
  bool embed_norm = false;
  CLI::Option* final_norm_flag = nullptr;
  CLI::Option* embed_norm_flag = nullptr;
  CLI::Option* mix_layers_opt = nullptr;
  CLI::Option* block_size_opt = nullptr;
};

// Registers the options on `cmd`; values land in `opts`.
void add_model_options(CLI::App* cmd, ModelOptions& opts);

// The validated config; throws UsageError for invalid values or combinations.
ModelConfig resolve_model_options(ModelOptions& opts);

}  // namespace normlab::cli
