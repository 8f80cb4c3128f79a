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

#include "normlab/base/activation.hpp"

#include "normlab/base/norm_kind.hpp"
#include "normlab/io/value_ranges.hpp"
#include "normlab/model/placement.hpp"

namespace normlab {

// Where the normalization sits in each residual block: one row each of the scheme table
// (scheme_table.hpp), which holds its whole definition.
enum class Scheme {
  pre,
  post,
  peri,
  peri_init,
  post_attn,
  mix,
  ngpt,
  sqrt_scaling,
  deepnorm,
  attnres,
  block_attnres,
  sandwich,
  pre_and_post,
  reordered,
  layernorm_scaling,
  layerscale,
  rezero,
  hybridnorm,
  resi_dual,
  siamesenorm,
  hyper_connections,
  resformer,
  custom
};

// alibi: a bias on the attention logits, no position in the embeddings; relative:
// Transformer-XL's learned terms by distance in the logits (docs/schemes.md).
enum class PosEncoding { none, learned, sinusoidal, rope, alibi, relative };
// A switch whose default depends on the scheme.
enum class Toggle { automatic, on, off };
// QK-norm: a per-head norm of the queries and keys inside attention (docs/schemes.md).
enum class QkNorm {
  none,    // q and k as projected
  l2,      // q/|q|, k/|k| per head; logits beta · s_h · q̂·k̂, s_h learnable (init 10)
  rmsnorm  // RMSNorm per head, gain (dh) shared by the heads; logits beta/sqrt(dh) · q̂·k̂
};

// How the weight matrices and embeddings are drawn at init (src/model/model_layout.cpp).
enum class WeightInit {
  normal,  // N(0, init_std²) for every matrix (GPT-2's; the default)
  // Haiku's hk.Linear default (Delétang et al.'s reference): each matrix a normal of std
  // 1/√fan_in truncated at ±2 std and not rescaled (its std is 0.8796/√fan_in); the
  // embeddings the same truncated normal of std embed_init_std. init_std is unused.
  truncated_fan_in
};

// The ranges of ModelConfig's integer fields: validate(), the TOML and JSON readers and the
// command line all check these, before any value is narrowed to int. The upper bounds keep a
// config's arithmetic far from overflow; whether a model fits in memory is checked separately
// (normlab/core/memory_budget.hpp).
namespace limits {
inline constexpr IntRange vocab{2, 1 << 20};
inline constexpr IntRange width{1, 1 << 16};
inline constexpr IntRange heads{1, 1 << 12};
inline constexpr IntRange layers{1, 1 << 12};
inline constexpr IntRange mlp_mult{1, 64};
inline constexpr IntRange max_len{1, 1 << 24};
inline constexpr IntRange mix_layers{0, 1 << 12};  // and at most `layers`
inline constexpr IntRange block_size{1, 1 << 13};  // sublayers per block
inline constexpr IntRange streams{2, 64};          // n of hyper_connections
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
  // pos sinusoidal: positions count from the sequence's end, t ↦ T − t (src/model/sinusoid.hpp).
  // No effect with the other encodings, so that a sweep over pos may keep it set.
  bool sinusoid_from_end = false;
  double beta = 1.0;  // attention temperature: logits scaled by beta / sqrt(D / H)
  // Factor on the token embeddings, before positions are added: Vaswani et al.'s and Delétang
  // et al.'s encoders take sqrt(D).
  double embed_scale = 1.0;
  // Dropout in training (core/kernels/dropout.hpp): the probability of zeroing an element of
  // each sublayer's output before the add (residual dropout), of the embedding stream, and of
  // the attention probabilities.
  double dropout = 0.0;
  double embed_dropout = 0.0;
  double attn_dropout = 0.0;  // of the attention probabilities (core/kernels/attention.hpp)
  bool tied = false;          // unembedding shares the token embedding matrix
  // Biases (docs/schemes.md, "Biases"), zero at init and not weight-decayed: on the MLP's up
  // (M) and down (D) projections, and on the logits (V). Off (the default), the model has no
  // bias in any linear map; Delétang et al.'s encoder has both.
  bool mlp_bias = false;
  bool readout_bias = false;
  Toggle final_norm = Toggle::automatic;  // norm before unembedding (auto: per scheme)
  Toggle embed_norm = Toggle::automatic;  // norm on token embeddings (auto: on for peri_init)
  Scheme scheme = Scheme::pre;
  NormKind norm = NormKind::rmsnorm;
  int mix_layers = 1;                // k of mix(k): layers l < k are post, the rest pre
  int block_size = 2;                // S of block_attnres: sublayers per block
  int streams = 4;                   // n of hyper_connections: residual streams per token
  bool sinkhorn = false;             // hyper_connections: mHC (doubly stochastic residual mix)
  double norm_eps = 1e-5;            // epsilon inside every norm's square root
  double init_std = 0.02;            // std of the normal init of embeddings and weight matrices
  WeightInit weight_init{};          // how matrices and embeddings are drawn (default normal)
  double embed_init_std = 0.0;       // std of the token and position embeddings; 0: init_std
  bool scaled_residual_init = true;  // attention-out and MLP-down init std / sqrt(2L) (GPT-2)
  double ngpt_alpha_init = 0.05;     // initial per-feature step alpha of nGPT
  NormPlacement attn_norms;          // attention sublayers' norms (auto: the scheme's)
  NormPlacement mlp_norms;           // MLP sublayers' norms (auto: the scheme's)
  Placement placement;               // rules applied after the scheme's and the two above
  QkNorm qk_norm = QkNorm::none;     // per-head norm of queries and keys (docs/schemes.md)

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
std::string to_string(QkNorm q);
std::string to_string(WeightInit w);
std::string to_string(const NormPlacement& p);

// Parsers throw UsageError listing the allowed names.
Scheme parse_scheme(const std::string& s);
NormKind parse_norm_kind(const std::string& s);
PosEncoding parse_pos_encoding(const std::string& s);
Activation parse_activation(const std::string& s);
NormPlacement parse_norm_placement(const std::string& s);
Toggle parse_toggle(const std::string& s);
QkNorm parse_qk_norm(const std::string& s);
WeightInit parse_weight_init(const std::string& s);

// The norm kind a scheme gets when none is named: l2 for ngpt (its hidden states live on the
// unit sphere), `fallback` for every other scheme.
NormKind default_norm_kind(Scheme scheme, NormKind fallback = NormKind::rmsnorm);

std::vector<std::string> scheme_names();
std::vector<std::string> norm_kind_names();
std::vector<std::string> pos_encoding_names();
std::vector<std::string> qk_norm_names();
std::vector<std::string> weight_init_names();

// Throws UsageError for an invalid config, saying what is allowed: integers in their ranges
// (limits above), every real finite and in its range.
void validate(const ModelConfig& config);

// The display name of the scheme including its parameter and any placement override or QK-norm:
// "mix(2)", "block_attnres(4)", "post[attn=out:standardize]", "pre[qk=l2]".
std::string scheme_label(const ModelConfig& config);

nlohmann::json to_json(const ModelConfig& config);
// Reads a config written by to_json; throws InputError on a missing or wrong field.
ModelConfig model_config_from_json(const nlohmann::json& j);

// Multi-line "key = value" listing, printed at the start of every run.
std::string describe(const ModelConfig& config);

}  // namespace normlab
