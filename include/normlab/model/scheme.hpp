// A normalization scheme, resolved once into per-sublayer slots (docs/design.md principle 1).
//
// Every sublayer (attention or MLP) of every layer runs the same code over its slots:
//   u   = input_scale · (norm_in ? N_in(x) : x)         // x: the sublayer's input (B, T, D)
//   y   = f(u)                                            // attention or MLP
//   z   = norm_out ? N_out(y) : y
//   r   = a ⊙ x + b ⊙ z                                   // additive update; a, b: residual,
//                                                         // branch (constants or learnable)
//   r   = x̂ + |alpha| ⊙ (z − x̂), x̂ = N_x(x)              // interpolate (nGPT), alpha learnable (D)
//   out = norm_post ? N_post(r) : r
// The residual mode decides where x comes from and where out goes: additively, x of sublayer
// i + 1 is out of sublayer i; under AttnRes (docs/reference.md §4, docs/attnres.md) x is a softmax
// mixture over recorded sources, and out (with r = z, or the block's partial sum + z) is
// recorded as a new source. Under two streams (docs/schemes.md, "Two streams") x is additive as
// above and a second stream y gathers every z.
// resolve_scheme() reads the scheme's row (scheme_table.hpp), applies its placement preset and
// the config's overrides (placement.hpp) layer by layer, and copies the row's side effects.
#pragma once

#include <vector>

#include "normlab/model/model_config.hpp"
#include "normlab/model/scheme_table.hpp"

namespace normlab {

struct SublayerSlots {
  bool norm_in = false;    // N before f (pre, peri)
  bool norm_out = false;   // N on f's output before the add (peri, post_attn, ngpt)
  bool norm_post = false;  // N after the residual add (post, deepnorm, ngpt)
  // The factors of the add: kind constant (value), vector or scalar (learnable, init value);
  // 1/sqrt(l+1) is resolved to its constant.
  ScaleSpec residual;        // multiplies x (deepnorm: (2L)^(1/4))
  ScaleSpec branch;          // multiplies z (sqrt_scaling: 1/sqrt(l+1); layerscale, rezero)
  double input_scale = 1.0;  // multiplies f's input (layernorm_scaling: 1/sqrt(l+1))
  bool interpolate = false;  // nGPT: r = N_x(x) + |alpha| ⊙ (z − N_x(x)), N_x of kind_post
  // The kind of each norm: the model's `norm`, unless a placement names one.
  NormKind kind_in = NormKind::rmsnorm;
  NormKind kind_out = NormKind::rmsnorm;
  NormKind kind_post = NormKind::rmsnorm;
};

// Per-head norms inside every attention sublayer (QK-norm, HybridNorm's QKV-norm;
// docs/schemes.md): each head's dh features of q (k, v) are normalized as one row of the norm,
// whose parameters (dh) every head shares, before RoPE.
struct HeadNorms {
  bool q = false, k = false, v = false;
  NormKind kind = NormKind::rmsnorm;
  // l2 QK-norm: q̂ times s_h, a learnable number per head (init scale_init), and the logits'
  // factor is beta instead of beta / sqrt(dh): logits = beta · s_h · q̂·k̂.
  bool learned_scale = false;
  double scale_init = 10.0;  // x-transformers' qk_norm_scale
  bool any() const { return q || k || v; }
};

struct ResolvedScheme {
  // One entry per sublayer in execution order: layer 0 attention, layer 0 MLP, layer 1 ...
  std::vector<SublayerSlots> sublayers;
  bool embed_norm = false;  // N on the token embeddings before the first block
  bool final_norm = false;  // N before the unembedding
  ResidualMode residual_mode = ResidualMode::additive;
  bool unit_norm_weights = false;  // nGPT: embeddings and weight rows renormalized every step
  bool weight_decay = true;        // false: no weight decay on any parameter (nGPT)
  bool logit_scale = false;        // nGPT: learnable per-token scale on the logits
  bool sphere_qk = false;          // nGPT: q, k ← s_qk ⊙ q/‖q‖ per head after RoPE
  bool mlp_scale = false;          // nGPT: the MLP's pre-activation ⊙ s_uv
  double branch_init_scale = 1.0;  // DeepNorm: value, output and MLP init times (8L)^(-1/4)
  bool gpt2_scaled_init = true;    // output projections' init / sqrt(2L) (with the config's
                                   // scaled_residual_init); off under DeepNorm's own rule
  HeadNorms head_norms;            // the config's qk_norm, or the row's own (HybridNorm)
  TwoStreamRule two_stream = {};   // the second stream (residual_mode two_stream; else all off)
  bool value_residual = false;     // ResFormer: attention n > 1 reads the values ½(V_n + V_1)

  // AttnRes (residual_mode attnres or block_attnres; empty otherwise). Sources: 0 is the
  // embedding stream, j + 1 the record of sublayer j. Mixing points: l < S is the input of
  // sublayer l, l = S the final stream (before the final norm). attnres is block_attnres with
  // blocks of one sublayer.
  int res_block = 0;  // sublayers per block: 1 for attnres, config.block_size for block_attnres
  // res_continues[j]: record j+1 = record j + z_j (sublayer j is not the first of its block, so
  // it adds to the block's partial sum); otherwise record j+1 = z_j.  (S)
  std::vector<bool> res_continues;
  // res_sources[l]: the ascending source ids mixing point l attends over: 0, the record ending
  // each finished block, and the current partial sum (record l) when it is not empty.  (S + 1)
  std::vector<std::vector<int>> res_sources;
  // res_source_block[j]: the block of source j; 0 for the embedding, j−1 / res_block + 1 for a
  // record. The records of one block are successive partial sums of it.  (S + 1)
  std::vector<int> res_source_block;
  int res_blocks = 0;  // number of blocks, the embedding's included
};

// Resolves config.scheme: its row's placement preset, then the overrides attn_norms ("attn:
// X"), mlp_norms ("mlp: X") and placement, rule by rule; then final_norm and embed_norm when
// they are not auto; the head norms from the row (HybridNorm) or the config's qk_norm. The
// config's scheme parameter and norm must be valid (validate() calls this and checks the
// result).
ResolvedScheme resolve_scheme(const ModelConfig& config);

}  // namespace normlab
