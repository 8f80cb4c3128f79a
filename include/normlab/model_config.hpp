// The model configuration: one struct, every field with a default and a comment.
//
// Printed at the start of a run and stored in every checkpoint (safetensors __metadata__), so
// that any number can be traced back to the model that produced it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "normlab/value_ranges.hpp"

namespace normlab {

// Where the normalization sits in each residual block (docs/reference.md §1, §4).
enum class Scheme {
  pre,           // h = h + f(N(h)), final norm
  post,          // h = N(h + f(h))
  peri,          // h = h + N_out(f(N_in(h)))
  peri_init,     // peri plus a norm on the token embeddings
  post_attn,     // h = h + N(attn(h)); MLP h = h + mlp(h)
  mix,           // post for layers l < mix_layers, pre after
  ngpt,          // h = N(h + alpha * (N(f(h)) - h)), unit-norm weights
  sqrt_scaling,  // h = h + f(N(h)) / sqrt(l + 1)
  deepnorm,      // h = N(a*h + f(h)), a = (2L)^(1/4), init scaled by (8L)^(-1/4)
  attnres,       // pre-norm sublayers, inputs are softmax mixtures of all earlier outputs
  block_attnres  // as attnres, over block sums of block_size sublayers
};

// The normalization function N (docs/schemes.md gives each one's exact formula).
enum class NormKind {
  layernorm,    // (x - mean) / std * gain + bias
  rmsnorm,      // x / rms(x) * gain
  standardize,  // (x - mean) / std, no parameters
  l2,           // x / ||x||, no parameters (nGPT's unit sphere)
  none,         // identity (only with scheme pre: the unnormalized baseline)
  dyt,          // tanh(alpha * x) * gain + bias, alpha a scalar (Dynamic Tanh)
  derf,         // erf(alpha * x + shift) * gain + bias, alpha and shift scalars (Dynamic erf)
  scalenorm     // scale * x / ||x||, scale a scalar (ScaleNorm)
};

enum class PosEncoding { none, learned, sinusoidal, rope };
enum class Activation { gelu, relu };
// A switch whose default depends on the scheme.
enum class Toggle { automatic, on, off };

// One norm slot of a placement override: present or not, and its kind (none given: the
// model's `norm`).
struct SlotNorm {
  bool present = false;
  std::optional<NormKind> kind;
};

// The norms of one kind of sublayer (attention or MLP, every layer), overriding the scheme's
// row (docs/schemes.md, "Placement overrides"). Written "auto" (the scheme decides), "none"
// (no norm), or slots joined by '+' with an optional kind: "post", "in+out",
// "out:standardize".
struct NormPlacement {
  bool automatic = true;  // the scheme's row decides; in, out and post are unused
  SlotNorm in;            // N before the branch f
  SlotNorm out;           // N on f's output, before the residual add
  SlotNorm post;          // N after the residual add
};

// The ranges of ModelConfig's integer fields: validate(), the TOML and JSON readers and the
// command line all check these, before any value is narrowed to int. The upper bounds keep a
// config's arithmetic far from overflow; whether a model fits in memory is checked separately
// (normlab/memory_budget.hpp).
namespace limits {
inline constexpr IntRange vocab{2, 1 << 20};
inline constexpr IntRange width{1, 1 << 16};
inline constexpr IntRange heads{1, 1 << 12};
inline constexpr IntRange layers{1, 1 << 12};
inline constexpr IntRange mlp_mult{1, 64};
inline constexpr IntRange max_len{1, 1 << 24};
inline constexpr IntRange mix_layers{0, 1 << 12};  // and at most `layers`
inline constexpr IntRange block_size{1, 1 << 13};  // sublayers per block
}  // namespace limits

struct ModelConfig {
  int vocab = 16;                            // V: vocabulary size
  int width = 32;                            // D: model width (embedding and value dimension)
  int heads = 1;                             // H: attention heads; must divide D
  int layers = 2;                            // L: number of blocks
  bool mlp = true;                           // an MLP sublayer after attention in every block
  int mlp_mult = 4;                          // MLP hidden width = mlp_mult * D
  Activation activation = Activation::gelu;  // MLP nonlinearity (GELU is the exact erf form)
  bool causal = true;                        // causal mask; false = bidirectional attention
  PosEncoding pos = PosEncoding::none;       // positional encoding
  int max_len = 1024;                        // longest sequence for learned absolute positions
  double rope_base = 10000.0;                // RoPE frequency base
  double beta = 1.0;  // attention temperature: logits scaled by beta / sqrt(D / H)
  bool tied = false;  // unembedding shares the token embedding matrix
  Toggle final_norm = Toggle::automatic;  // norm before unembedding (auto: per scheme)
  Toggle embed_norm = Toggle::automatic;  // norm on token embeddings (auto: on for peri_init)
  Scheme scheme = Scheme::pre;
  NormKind norm = NormKind::rmsnorm;
  int mix_layers = 1;                // k of mix(k): layers l < k are post, the rest pre
  int block_size = 2;                // S of block_attnres: sublayers per block
  double norm_eps = 1e-5;            // epsilon inside every norm's square root
  double init_std = 0.02;            // std of the normal init of embeddings and weight matrices
  bool scaled_residual_init = true;  // attention-out and MLP-down init std / sqrt(2L) (GPT-2)
  double ngpt_alpha_init = 0.05;     // initial per-feature step alpha of nGPT
  NormPlacement attn_norms;          // attention sublayers' norms (auto: the scheme's)
  NormPlacement mlp_norms;           // MLP sublayers' norms (auto: the scheme's)

  int head_dim() const { return width / heads; }
  int mlp_hidden() const { return mlp_mult * width; }
  // Sublayers per block: attention, and the MLP when on.
  int sublayers_per_layer() const { return mlp ? 2 : 1; }
};

std::string to_string(Scheme s);
std::string to_string(NormKind k);
std::string to_string(PosEncoding p);
std::string to_string(Activation a);
std::string to_string(Toggle t);
std::string to_string(const NormPlacement& p);

// Parsers throw UsageError listing the allowed names.
Scheme parse_scheme(const std::string& s);
NormKind parse_norm_kind(const std::string& s);
PosEncoding parse_pos_encoding(const std::string& s);
Activation parse_activation(const std::string& s);
NormPlacement parse_norm_placement(const std::string& s);

// The norm kind a scheme gets when none is named: l2 for ngpt (its hidden states live on the
// unit sphere), `fallback` for every other scheme.
NormKind default_norm_kind(Scheme scheme, NormKind fallback = NormKind::rmsnorm);

std::vector<std::string> scheme_names();
std::vector<std::string> norm_kind_names();
std::vector<std::string> pos_encoding_names();

// Throws UsageError for an invalid config, saying what is allowed: integers in their ranges
// (limits above), every real finite and in its range.
void validate(const ModelConfig& config);

// The display name of the scheme including its parameter and any placement override: "mix(2)",
// "block_attnres(4)", "post[attn=out:standardize]".
std::string scheme_label(const ModelConfig& config);

nlohmann::json to_json(const ModelConfig& config);
// Reads a config written by to_json; throws InputError on a missing or wrong field.
ModelConfig model_config_from_json(const nlohmann::json& j);

// Multi-line "key = value" listing, printed at the start of every run.
std::string describe(const ModelConfig& config);

}  // namespace normlab
