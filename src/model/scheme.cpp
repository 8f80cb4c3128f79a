#include "normlab/scheme.hpp"

#include <cmath>

namespace normlab {
namespace {

SublayerSlots pre_slots() {
  return {.norm_in = true};
}
SublayerSlots post_slots() {
  return {.norm_post = true};
}

// A placement override replaces the row's norms of one sublayer; scales, interpolation and the
// residual mode stay the row's.
void apply_placement(const NormPlacement& p, NormKind model_norm, SublayerSlots& slots) {
  slots.kind_in = slots.kind_out = slots.kind_post = model_norm;
  if (p.automatic) return;
  slots.norm_in = p.in.present;
  slots.norm_out = p.out.present;
  slots.norm_post = p.post.present;
  slots.kind_in = p.in.kind.value_or(model_norm);
  slots.kind_out = p.out.kind.value_or(model_norm);
  slots.kind_post = p.post.kind.value_or(model_norm);
}

bool resolve_toggle(Toggle t, bool automatic) {
  if (t == Toggle::on) return true;
  if (t == Toggle::off) return false;
  return automatic;
}

// The AttnRes plan (docs/reference.md §4) for blocks of `block` sublayers: sublayer j's record
// continues its block's partial sum unless j starts a block; mixing point l attends over the
// embedding, the last record of every block finished before l, and record l (the partial sum
// of l's own block, or the last finished block when l starts a block).
void resolve_attnres(ResolvedScheme& r, int block) {
  const int S = static_cast<int>(r.sublayers.size());
  r.res_block = block;
  r.res_continues.assign(S, false);
  for (int j = 0; j < S; ++j) r.res_continues[j] = j % block != 0;
  r.res_sources.assign(S + 1, {});
  for (int l = 0; l <= S; ++l) {
    r.res_sources[l].push_back(0);
    for (int j = 0; j < l; ++j) {
      if ((j + 1) % block == 0 || j == l - 1) r.res_sources[l].push_back(j + 1);
    }
  }
  r.res_shared.assign(S + 1, 0);
  for (int l = 0; l <= S; ++l) {
    r.res_shared[l] = static_cast<int>(r.res_sources[l].size()) - (l % block != 0 ? 1 : 0);
  }
  r.res_source_block.assign(S + 1, 0);
  for (int j = 0; j < S; ++j) r.res_source_block[j + 1] = j / block + 1;
  r.res_blocks = (S + block - 1) / block + 1;
}

}  // namespace

ResolvedScheme resolve_scheme(const ModelConfig& c) {
  ResolvedScheme r;
  bool final_default = true;
  bool embed_default = false;
  const double L = c.layers;
  for (int l = 0; l < c.layers; ++l) {
    for (int s = 0; s < c.sublayers_per_layer(); ++s) {
      const bool is_attention = s == 0;
      SublayerSlots slots;
      switch (c.scheme) {
        case Scheme::pre:
        case Scheme::attnres:
        case Scheme::block_attnres:
          slots = pre_slots();
          break;
        case Scheme::post:
          slots = post_slots();
          break;
        case Scheme::peri:
        case Scheme::peri_init:
          slots = {.norm_in = true, .norm_out = true};
          break;
        case Scheme::post_attn:
          // The vanishing-variance placement: only the attention output is normalized.
          slots.norm_out = is_attention;
          break;
        case Scheme::mix:
          slots = l < c.mix_layers ? post_slots() : pre_slots();
          break;
        case Scheme::ngpt:
          slots = {.norm_out = true, .norm_post = true, .interpolate = true};
          break;
        case Scheme::sqrt_scaling:
          slots = pre_slots();
          slots.branch_scale = 1.0 / std::sqrt(l + 1.0);
          break;
        case Scheme::deepnorm:
          slots = post_slots();
          slots.residual_scale = std::pow(2.0 * L, 0.25);
          break;
      }
      apply_placement(is_attention ? c.attn_norms : c.mlp_norms, c.norm, slots);
      if (c.norm == NormKind::none) {
        slots.norm_in = slots.norm_out = slots.norm_post = false;
      }
      r.sublayers.push_back(slots);
    }
  }
  switch (c.scheme) {
    case Scheme::post:
    case Scheme::deepnorm:
    case Scheme::ngpt:
      final_default = false;  // the stream leaving the last block is already normalized
      break;
    case Scheme::peri_init:
      embed_default = true;
      break;
    default:
      break;
  }
  if (c.scheme == Scheme::attnres) r.residual_mode = ResidualMode::attnres;
  if (c.scheme == Scheme::block_attnres) r.residual_mode = ResidualMode::block_attnres;
  if (r.residual_mode != ResidualMode::additive) {
    resolve_attnres(r, r.residual_mode == ResidualMode::attnres ? 1 : c.block_size);
  }
  if (c.scheme == Scheme::ngpt) {
    r.unit_norm_weights = true;
    r.weight_decay = false;
    r.logit_scale = true;
  }
  if (c.scheme == Scheme::deepnorm) r.branch_init_scale = std::pow(8.0 * L, -0.25);
  const bool has_norm = c.norm != NormKind::none;
  r.final_norm = has_norm && resolve_toggle(c.final_norm, final_default);
  r.embed_norm = has_norm && resolve_toggle(c.embed_norm, embed_default);
  return r;
}

}  // namespace normlab
