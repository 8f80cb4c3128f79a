// The fields of ModelConfig, declared once (gemma.cpp's VisitFields is the model).
//
// visit_model_fields() calls the visitor once per field, in the order of to_json(), with the
// field's FieldInfo, a reference to its value and, for numbers, its allowed range. Every
// reader and writer walks it: JSON (checkpoints, the Python package), the TOML reader of
// experiment files, the command line (flags and help), describe() and the range checks of
// validate(). Adding a field is adding one line here (and its meaning in the model).
//
// A visitor provides:
//   void operator()(const FieldInfo&, int& value, IntRange range);
//   void operator()(const FieldInfo&, double& value, RealRange range);
//   void operator()(const FieldInfo&, bool& value);
//   template <typename E> void operator()(const FieldInfo&, E& value);   // a word: see below
// (const-qualified values when it walks a const ModelConfig). A "word" field is written as
// text: to_string(value) writes it, parse_field(text, value) reads it, and field_choices(value)
// lists the allowed words (empty when the text is free-form, e.g. a placement).
#pragma once

#include <string>
#include <vector>

#include "normlab/model/model_config.hpp"

namespace normlab {

struct FieldInfo {
  const char* name;  // the JSON key (checkpoints); also the TOML key and --flag unless `key`
  const char* help;  // one line for --help
  // The TOML key and the command-line flag (--key, '_' written '-') when they differ from
  // the JSON key, which checkpoints fix.
  const char* key = nullptr;
  // The flag spelling when it is not --key (booleans: "--key,!--no-key" by default).
  const char* flag = nullptr;
  bool in_toml = true;         // false: set elsewhere in an experiment (vocab by the task,
                               // scheme by each variant)
  bool optional_json = false;  // absent from old checkpoints: read as the default
  // Written to JSON only when it differs from the default, so that the configs (and the
  // result hashes) of models that do not use a field added later stay as they were.
  bool omit_default = false;
  const char* toml_key() const { return key != nullptr ? key : name; }
};

// Word fields: text form, parsing, allowed words.
inline void parse_field(const std::string& s, Scheme& v) {
  v = parse_scheme(s);
}
inline void parse_field(const std::string& s, NormKind& v) {
  v = parse_norm_kind(s);
}
inline void parse_field(const std::string& s, PosEncoding& v) {
  v = parse_pos_encoding(s);
}
inline void parse_field(const std::string& s, Activation& v) {
  v = parse_activation(s);
}
inline void parse_field(const std::string& s, Toggle& v) {
  v = parse_toggle(s);
}
inline void parse_field(const std::string& s, NormPlacement& v) {
  v = parse_norm_placement(s);
}
inline std::vector<std::string> field_choices(const Scheme&) {
  return scheme_names();
}
inline std::vector<std::string> field_choices(const NormKind&) {
  return norm_kind_names();
}
inline std::vector<std::string> field_choices(const PosEncoding&) {
  return pos_encoding_names();
}
inline std::vector<std::string> field_choices(const Activation&) {
  return {"gelu", "relu"};
}
inline std::vector<std::string> field_choices(const Toggle&) {
  return {"auto", "on", "off"};
}
inline std::vector<std::string> field_choices(const NormPlacement&) {
  return {};
}
inline void parse_field(const std::string& s, QkNorm& v) {
  v = parse_qk_norm(s);
}
inline std::vector<std::string> field_choices(const QkNorm&) {
  return qk_norm_names();
}
inline void parse_field(const std::string& s, Placement& v) {
  v = parse_placement(s);
}
inline std::vector<std::string> field_choices(const Placement&) {
  return {};
}
inline void parse_field(const std::string& s, WeightInit& v) {
  v = parse_weight_init(s);
}
inline std::vector<std::string> field_choices(const WeightInit&) {
  return weight_init_names();
}

// Config is ModelConfig or const ModelConfig.
template <typename Config, typename Visitor>
void visit_model_fields(Config& c, Visitor&& v) {
  constexpr RealRange kPositive{0, kUnbounded, false, false};
  v(FieldInfo{.name = "vocab", .help = "Vocabulary size V", .in_toml = false}, c.vocab,
    limits::vocab);
  v(FieldInfo{.name = "width", .help = "Model width D"}, c.width, limits::width);
  v(FieldInfo{.name = "heads", .help = "Attention heads H (must divide D)"}, c.heads,
    limits::heads);
  v(FieldInfo{.name = "layers", .help = "Number of blocks L"}, c.layers, limits::layers);
  v(FieldInfo{.name = "mlp", .help = "MLP sublayer in each block (default on)"}, c.mlp);
  v(FieldInfo{.name = "mlp_mult", .help = "MLP hidden width multiplier"}, c.mlp_mult,
    limits::mlp_mult);
  v(FieldInfo{.name = "activation", .help = "MLP activation (GELU is the exact erf form)"},
    c.activation);
  v(FieldInfo{.name = "causal",
              .help = "Causal (default) or bidirectional attention",
              .flag = "--causal,!--bidirectional"},
    c.causal);
  v(FieldInfo{.name = "pos", .help = "Positional encoding"}, c.pos);
  v(FieldInfo{.name = "max_len", .help = "Longest sequence for learned positions"}, c.max_len,
    limits::max_len);
  v(FieldInfo{.name = "rope_base", .help = "RoPE frequency base"}, c.rope_base,
    RealRange{1, kUnbounded, false, false});
  v(FieldInfo{.name = "sinusoid_from_end",
              .help = "Sinusoidal positions count from the end: t -> T - t",
              .flag = "--sinusoid-from-end",
              .optional_json = true},
    c.sinusoid_from_end);
  v(FieldInfo{.name = "beta", .help = "Attention temperature: logits scaled by beta/sqrt(D/H)"},
    c.beta, kPositive);
  v(FieldInfo{.name = "embed_scale",
              .help = "Factor on the token embeddings before positions (e.g. sqrt(D))",
              .optional_json = true},
    c.embed_scale, kPositive);
  constexpr RealRange kProbability{0, 1, true, false};
  v(FieldInfo{.name = "dropout",
              .help = "Training dropout on each sublayer's output before the add",
              .optional_json = true},
    c.dropout, kProbability);
  v(FieldInfo{.name = "embed_dropout",
              .help = "Training dropout on the embedding stream",
              .optional_json = true},
    c.embed_dropout, kProbability);
  v(FieldInfo{.name = "attn_dropout",
              .help = "Training dropout on the attention probabilities",
              .optional_json = true},
    c.attn_dropout, kProbability);
  v(FieldInfo{.name = "tied",
              .help = "Tie the unembedding to the embedding (default untied)",
              .flag = "--tied,!--untied"},
    c.tied);
  v(FieldInfo{.name = "mlp_bias",
              .help = "A bias on the MLP's up and down projections, zero at init, not decayed",
              .flag = "--mlp-bias",
              .optional_json = true,
              .omit_default = true},
    c.mlp_bias);
  v(FieldInfo{.name = "readout_bias",
              .help = "A bias on the logits (V), zero at init, not decayed",
              .flag = "--readout-bias",
              .optional_json = true,
              .omit_default = true},
    c.readout_bias);
  v(FieldInfo{.name = "final_norm",
              .help = "Norm before the unembedding: auto (per scheme), on, off",
              .flag = "--final-norm,!--no-final-norm"},
    c.final_norm);
  v(FieldInfo{.name = "embed_norm",
              .help = "Norm on the embeddings: auto (on for peri_init only), on, off",
              .flag = "--embed-norm,!--no-embed-norm"},
    c.embed_norm);
  v(FieldInfo{.name = "scheme", .help = "Normalization scheme", .in_toml = false}, c.scheme);
  v(FieldInfo{.name = "norm", .help = "Norm kind (default rmsnorm; l2 for ngpt)"}, c.norm);
  v(FieldInfo{.name = "mix_layers", .help = "k of mix(k): layers l < k are post-norm"},
    c.mix_layers, limits::mix_layers);
  v(FieldInfo{.name = "block_size", .help = "Sublayers per block of block_attnres"}, c.block_size,
    limits::block_size);
  v(FieldInfo{.name = "streams",
              .help = "Residual streams per token n of hyper_connections (default 4)",
              .optional_json = true,
              .omit_default = true},
    c.streams, limits::streams);
  v(FieldInfo{.name = "sinkhorn",
              .help = "hyper_connections as mHC: the residual mix projected onto doubly "
                      "stochastic matrices by Sinkhorn-Knopp (docs/schemes.md)",
              .flag = "--sinkhorn",
              .optional_json = true,
              .omit_default = true},
    c.sinkhorn);
  v(FieldInfo{.name = "norm_eps", .help = "Epsilon inside every norm's square root"}, c.norm_eps,
    kPositive);
  v(FieldInfo{.name = "init_std", .help = "Std of the normal weight init"}, c.init_std, kPositive);
  v(FieldInfo{.name = "weight_init",
              .help = "How matrices and embeddings are drawn: normal (N(0, init_std^2)) or "
                      "truncated_fan_in (Haiku's Linear default: std 1/sqrt(fan_in), truncated "
                      "at 2 std; embeddings std embed_init_std)",
              .optional_json = true,
              .omit_default = true},
    c.weight_init);
  v(FieldInfo{.name = "embed_init_std",
              .help = "Std of the token and learned-position embeddings' init (0: init_std)",
              .optional_json = true,
              .omit_default = true},
    c.embed_init_std, RealRange{0, kUnbounded, true, false});
  v(FieldInfo{.name = "scaled_residual_init",
              .help = "Scale output-projection init by 1/sqrt(2L) (default on)",
              .key = "scaled_init"},
    c.scaled_residual_init);
  v(FieldInfo{.name = "ngpt_alpha_init", .help = "Initial per-feature step alpha of nGPT"},
    c.ngpt_alpha_init, kPositive);
  v(FieldInfo{.name = "attn_norms",
              .help = "Attention sublayers' norms, overriding the scheme: auto, none, or slots "
                      "in, out, post joined by '+', each optionally ':KIND' (docs/schemes.md)",
              .optional_json = true},
    c.attn_norms);
  v(FieldInfo{.name = "mlp_norms",
              .help = "MLP sublayers' norms, as --attn-norms",
              .optional_json = true},
    c.mlp_norms);
  v(FieldInfo{.name = "placement",
              .help = "Placement rules after the scheme's, e.g. \"all: in, branch=vector(0.1); "
                      "attn[0:2]: post\" (docs/schemes.md)",
              .optional_json = true,
              .omit_default = true},
    c.placement);
  v(FieldInfo{.name = "qk_norm",
              .help = "Per-head norm of queries and keys (the kind is required): none, l2 "
                      "(cosine logits times a learnable scale per head, init 10) or rmsnorm "
                      "(docs/schemes.md)",
              .optional_json = true,
              .omit_default = true},
    c.qk_norm);
}

}  // namespace normlab
