// The model options shared by every subcommand that builds a model (init, bench ...): one
// flag per ModelConfig field (include/normlab/model/model_fields.hpp), --key with '_' written '-':
// --scheme, --norm, --vocab, --width, --heads, --layers, --mlp/--no-mlp, --mlp-mult,
// --activation, --causal/--bidirectional, --pos, --max-len, --rope-base, --beta,
// --tied/--untied, --final-norm/--no-final-norm, --embed-norm/--no-embed-norm, --mix-layers,
// --block-size, --norm-eps, --init-std, --scaled-init/--no-scaled-init, --ngpt-alpha-init,
// --attn-norms, --mlp-norms.
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "normlab/model/model_config.hpp"

namespace normlab::cli {

struct ModelOptions {
  ModelConfig config;  // the defaults, overwritten by the flags given
  // Each field's option by field name, to tell which were given.
  std::map<std::string, CLI::Option*> given;
  // Errors of word values (an unknown scheme, a bad placement), raised by resolve.
  std::string error;
  bool was_given(const std::string& field) const;
};

// Registers the options on `cmd`; values land in `opts`.
void add_model_options(CLI::App* cmd, ModelOptions& opts);

// The validated config; throws UsageError for invalid values or combinations.
ModelConfig resolve_model_options(ModelOptions& opts);

}  // namespace normlab::cli
