// The scheme table: each named scheme's whole definition in one row (docs/schemes.md).
//
// A row gives the scheme's placement as a preset in the placement language (placement.hpp),
// the defaults of the embedding and final norms, the residual mode, the nGPT update and its
// side effects (unit-norm weights, no weight decay, a logit scale), the init rule and the
// default norm kind. The command line, TOML, JSON, labels and validation read the table;
// tests iterate it. Adding a scheme is adding an enum value and a row (docs/schemes.md,
// "Adding a scheme").
#pragma once

#include <span>
#include <string>

#include "normlab/model/model_config.hpp"

namespace normlab {

// How the sublayer inputs are formed.
enum class ResidualMode {
  additive,       // x of sublayer i+1 is out of sublayer i
  attnres,        // x of sublayer i is a softmax mixture over all earlier outputs
  block_attnres,  // x of sublayer i is a softmax mixture over block sums
  two_stream,     // additive, beside a second stream y ← y + z (TwoStreamRule)
  hyper           // n streams per token mixed by learned weights (hyper-connections, mHC)
};

// AttnRes and Block AttnRes: the sublayer inputs are mixtures over depth (docs/attnres.md).
inline bool mixes_over_depth(ResidualMode mode) {
  return mode == ResidualMode::attnres || mode == ResidualMode::block_attnres;
}

// The second stream of ResidualMode::two_stream (docs/schemes.md, "Two streams"). y starts as
// the embedding stream, like x, and gathers every branch output unscaled, y ← y + z; x is
// updated by the sublayer's slots. Each N below is a norm of the model's kind with its own
// parameters.
struct TwoStreamRule {
  bool renorm_x = false;       // x ← N_x(x) before every sublayer (SiameseNorm)
  bool input_reads_y = false;  // f reads N_in(x + N_y(y)) (SiameseNorm); else the slots' input
  bool merge_norm_x = false;   // output N(x) + N(y) (SiameseNorm); else x + N(y) (resiDual)
};

// The number a scheme takes, written NAME(K) (mix(2), block_attnres(4), hyper_connections(3)):
// the config field it sets, and how files, the command line and the help name it. Labels,
// the experiment files' scheme parser, the command line's check and `normlab schemes` read it.
struct SchemeNumber {
  int ModelConfig::*field = nullptr;  // nullptr: the scheme takes no number
  const char* key = "";               // the field's name in files and --set, e.g. "mix_layers"
  const char* flag = "";              // its command-line flag, e.g. "--mix-layers"
  const char* letter = "";            // as the help writes it: mix(K)
  explicit operator bool() const { return field != nullptr; }
};

// How the weights that write into the residual stream are initialized.
enum class InitRule {
  gpt2,     // std init_std, output projections / sqrt(2L) when scaled_residual_init
  deepnorm  // value, output and MLP weights × (8L)^(-1/4), no GPT-2 scaling
};

// Per-head norms inside attention that a scheme places itself (docs/schemes.md, "QK-norm").
enum class HeadNormRule {
  none,  // only what the config's qk_norm adds
  qkv    // HybridNorm: q, k and v each normalized per head with the model's norm kind
};

struct SchemeRow {
  Scheme scheme;
  const char* name;
  const char* block;  // the block update, for help and docs
  // The preset in the placement language, for this config (mix(k) and deepnorm depend on it).
  std::string (*placement)(const ModelConfig& config);
  SchemeNumber number = {};
  bool final_norm = true;   // a norm before the unembedding unless final_norm says otherwise
  bool embed_norm = false;  // a norm on the embeddings unless embed_norm says otherwise
  ResidualMode residual_mode = ResidualMode::additive;
  // nGPT: r = N(x) + |alpha| ⊙ (z − N(x)), alpha learnable (D), N the model's norm.
  bool interpolate = false;
  bool unit_norm_weights = false;  // nGPT: embeddings and weight rows renormalized every step
  bool weight_decay = true;        // false: no weight decay on any parameter (nGPT)
  bool logit_scale = false;        // nGPT: learnable per-token scale s_z on the logits (V)
  // nGPT: after RoPE, q and k of each head ← s_qk ⊙ q/‖q‖ (l2 over dh, whatever the model's
  // norm), s_qk learnable (D) and shared by q and k; attention logits beta · sqrt(dh) · q·k.
  bool sphere_qk = false;
  bool mlp_scale = false;  // nGPT: the MLP's pre-activation ⊙ s_uv, learnable (M)
  InitRule init = InitRule::gpt2;
  NormKind default_norm = NormKind::rmsnorm;  // the norm kind when none is named
  // norm = none: pre drops its norms (the unnormalized baseline); rows whose placement has
  // no norm (rezero, custom) allow it too; every other row refuses it.
  bool norm_none_allowed = false;
  bool overrides_allowed = true;  // false: attn_norms, mlp_norms, placement, qk_norm refused
  HeadNormRule head_norms = HeadNormRule::none;  // norms inside attention; qkv refuses qk_norm
  TwoStreamRule two_stream = {};                 // with residual_mode two_stream
  // Value residual (ResFormer, arXiv 2410.17897): every attention after the first reads the
  // values ½(V_n + V_1), V_1 those of the first attention (src/model/residual/value_residual.cpp).
  bool value_residual = false;
  // The definition's revision: raised when a scheme's computation changes, so that its models'
  // configs (and the results and checkpoints keyed by them) differ from the old ones. Written
  // to the model config JSON as scheme_revision when above 1; a config or checkpoint of
  // another revision is refused (model_config_from_json).
  int revision = 1;
  // What models of the revisions before `revision` lack, for the message that refuses them
  // (" (before ...)"), or empty.
  const char* earlier_revisions_lack = "";
};

// Every row, in the order of enum Scheme.
std::span<const SchemeRow> scheme_table();
const SchemeRow& scheme_row(Scheme scheme);

}  // namespace normlab
