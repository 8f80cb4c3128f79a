#include "normlab/model/scheme.hpp"

#include <cmath>

#include "normlab/model/placement.hpp"

namespace normlab {
namespace {

// Sets the parts of `slots` that the rule names, for sublayer (layer l, attention or MLP).
void apply_rule(const PlacementRule& rule, int l, NormKind model_norm, SublayerSlots& slots) {
  if (rule.norms) {
    const NormPlacement& p = *rule.norms;
    slots.norm_in = p.in.present;
    slots.norm_out = p.out.present;
    slots.norm_post = p.post.present;
    slots.kind_in = p.in.kind.value_or(model_norm);
    slots.kind_out = p.out.kind.value_or(model_norm);
    slots.kind_post = p.post.kind.value_or(model_norm);
  }
  // 1/sqrt(l+1) becomes the constant of layer l (l from 0).
  auto at_layer = [l](ScaleSpec s) {
    if (s.kind == ScaleKind::inverse_sqrt_layer)
      s = {ScaleKind::constant, 1.0 / std::sqrt(l + 1.0)};
    return s;
  };
  if (rule.residual) slots.residual = at_layer(*rule.residual);
  if (rule.branch) slots.branch = at_layer(*rule.branch);
  if (rule.input) slots.input_scale = at_layer(*rule.input).value;
}

bool rule_applies(const PlacementRule& rule, int l, bool is_attention) {
  using Target = PlacementRule::Target;
  const bool kind = rule.target == Target::all || (rule.target == Target::attn && is_attention) ||
                    (rule.target == Target::mlp && !is_attention);
  return kind && l >= rule.first_layer && l < rule.end_layer;
}

// The rules in order: the row's preset, attn_norms, mlp_norms, the config's placement.
std::vector<PlacementRule> placement_rules(const SchemeRow& row, const ModelConfig& c) {
  std::vector<PlacementRule> rules = parse_placement(row.placement(c)).rules;
  for (const auto& [override_norms, target] :
       {std::pair{&c.attn_norms, PlacementRule::Target::attn},
        std::pair{&c.mlp_norms, PlacementRule::Target::mlp}}) {
    if (override_norms->automatic) continue;
    rules.push_back(PlacementRule::norms_of(target, *override_norms));
  }
  rules.insert(rules.end(), c.placement.rules.begin(), c.placement.rules.end());
  return rules;
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
  r.res_source_block.assign(S + 1, 0);
  for (int j = 0; j < S; ++j) r.res_source_block[j + 1] = j / block + 1;
  r.res_blocks = (S + block - 1) / block + 1;
}

// HybridNorm's q, k and v norms of the model's kind, or the config's QK-norm on q and k.
HeadNorms resolve_head_norms(const SchemeRow& row, const ModelConfig& c) {
  HeadNorms h;
  if (row.head_norms == HeadNormRule::qkv) {
    h.q = h.k = h.v = c.norm != NormKind::none;
    h.kind = c.norm;
    return h;
  }
  if (c.qk_norm == QkNorm::none) return h;
  h.q = h.k = true;
  h.kind = c.qk_norm == QkNorm::l2 ? NormKind::l2 : NormKind::rmsnorm;
  h.learned_scale = c.qk_norm == QkNorm::l2;
  return h;
}

}  // namespace

ResolvedScheme resolve_scheme(const ModelConfig& c) {
  const SchemeRow& row = scheme_row(c.scheme);
  const std::vector<PlacementRule> rules = placement_rules(row, c);
  ResolvedScheme r;
  bool final_default = row.final_norm;
  bool embed_default = row.embed_norm;
  for (int l = 0; l < c.layers; ++l) {
    for (int s = 0; s < c.sublayers_per_layer(); ++s) {
      const bool is_attention = s == 0;
      SublayerSlots slots;
      slots.kind_in = slots.kind_out = slots.kind_post = c.norm;
      for (const PlacementRule& rule : rules) {
        if (rule_applies(rule, l, is_attention)) apply_rule(rule, l, c.norm, slots);
      }
      slots.interpolate = row.interpolate;
      // norm = none: a slot of that kind is no norm (pre's unnormalized baseline).
      if (slots.kind_in == NormKind::none) slots.norm_in = false;
      if (slots.kind_out == NormKind::none) slots.norm_out = false;
      if (slots.kind_post == NormKind::none) slots.norm_post = false;
      r.sublayers.push_back(slots);
    }
  }
  for (const PlacementRule& rule : rules) {
    if (rule.target == PlacementRule::Target::final) final_default = *rule.on;
    if (rule.target == PlacementRule::Target::embed) embed_default = *rule.on;
  }
  r.residual_mode = row.residual_mode;
  if (mixes_over_depth(r.residual_mode)) {
    resolve_attnres(r, r.residual_mode == ResidualMode::attnres ? 1 : c.block_size);
  }
  if (r.residual_mode == ResidualMode::two_stream) r.two_stream = row.two_stream;
  r.unit_norm_weights = row.unit_norm_weights;
  r.weight_decay = row.weight_decay;
  r.logit_scale = row.logit_scale;
  r.sphere_qk = row.sphere_qk;
  r.value_residual = row.value_residual;
  r.mlp_scale = row.mlp_scale && c.mlp;
  if (row.init == InitRule::deepnorm) {
    r.branch_init_scale = std::pow(8.0 * c.layers, -0.25);
    r.gpt2_scaled_init = false;
  }
  r.head_norms = resolve_head_norms(row, c);
  const bool has_norm = c.norm != NormKind::none;
  r.final_norm = has_norm && resolve_toggle(c.final_norm, final_default);
  r.embed_norm = has_norm && resolve_toggle(c.embed_norm, embed_default);
  return r;
}

}  // namespace normlab
