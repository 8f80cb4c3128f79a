#include "normlab/model_config.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "normlab/errors.hpp"
#include "normlab/json_fields.hpp"
#include "normlab/printable.hpp"

namespace normlab {
namespace {

template <typename E>
struct Names {
  E value;
  const char* name;
};

constexpr Names<Scheme> kSchemes[] = {
    {Scheme::pre, "pre"},
    {Scheme::post, "post"},
    {Scheme::peri, "peri"},
    {Scheme::peri_init, "peri_init"},
    {Scheme::post_attn, "post_attn"},
    {Scheme::mix, "mix"},
    {Scheme::ngpt, "ngpt"},
    {Scheme::sqrt_scaling, "sqrt_scaling"},
    {Scheme::deepnorm, "deepnorm"},
    {Scheme::attnres, "attnres"},
    {Scheme::block_attnres, "block_attnres"},
};
constexpr Names<NormKind> kNorms[] = {{NormKind::layernorm, "layernorm"},
                                      {NormKind::rmsnorm, "rmsnorm"},
                                      {NormKind::standardize, "standardize"},
                                      {NormKind::l2, "l2"},
                                      {NormKind::dyt, "dyt"},
                                      {NormKind::derf, "derf"},
                                      {NormKind::scalenorm, "scalenorm"},
                                      {NormKind::none, "none"}};
constexpr Names<PosEncoding> kPos[] = {{PosEncoding::none, "none"},
                                       {PosEncoding::learned, "learned"},
                                       {PosEncoding::sinusoidal, "sinusoidal"},
                                       {PosEncoding::rope, "rope"}};
constexpr Names<Activation> kActivations[] = {{Activation::gelu, "gelu"},
                                              {Activation::relu, "relu"}};
constexpr Names<Toggle> kToggles[] = {
    {Toggle::automatic, "auto"}, {Toggle::on, "on"}, {Toggle::off, "off"}};

template <typename E, size_t N>
std::string name_of(const Names<E> (&table)[N], E value) {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

template <typename E, size_t N>
std::vector<std::string> all_names(const Names<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.name);
  return out;
}

template <typename E, size_t N>
E parse(const Names<E> (&table)[N], const std::string& s, const char* what) {
  for (const auto& entry : table) {
    if (s == entry.name) return entry.value;
  }
  throw UsageError(fmt::format("unknown {} '{}'; allowed: {}", what, printable(s),
                               fmt::join(all_names(table), ", ")));
}

}  // namespace

std::string to_string(Scheme s) {
  return name_of(kSchemes, s);
}
std::string to_string(NormKind k) {
  return name_of(kNorms, k);
}
std::string to_string(PosEncoding p) {
  return name_of(kPos, p);
}
std::string to_string(Activation a) {
  return name_of(kActivations, a);
}
std::string to_string(Toggle t) {
  return name_of(kToggles, t);
}

Scheme parse_scheme(const std::string& s) {
  return parse(kSchemes, s, "scheme");
}
NormKind parse_norm_kind(const std::string& s) {
  return parse(kNorms, s, "norm");
}
PosEncoding parse_pos_encoding(const std::string& s) {
  return parse(kPos, s, "positional encoding");
}
Activation parse_activation(const std::string& s) {
  return parse(kActivations, s, "activation");
}
static Toggle parse_toggle(const std::string& s) {
  return parse(kToggles, s, "switch");
}

std::string to_string(const NormPlacement& p) {
  if (p.automatic) return "auto";
  std::vector<std::string> items;
  auto add = [&](const SlotNorm& slot, const char* name) {
    if (!slot.present) return;
    items.push_back(slot.kind ? fmt::format("{}:{}", name, to_string(*slot.kind)) : name);
  };
  add(p.in, "in");
  add(p.out, "out");
  add(p.post, "post");
  return items.empty() ? "none" : fmt::format("{}", fmt::join(items, "+"));
}

NormPlacement parse_norm_placement(const std::string& s) {
  NormPlacement p;
  if (s == "auto") return p;
  p.automatic = false;
  if (s == "none") return p;
  const std::string allowed =
      "allowed: auto, none, or slots in, out, post joined by '+', each optionally ':KIND' "
      "(e.g. \"post\", \"in+out\", \"out:standardize\")";
  size_t start = 0;
  while (start <= s.size()) {
    const size_t plus = s.find('+', start);
    const std::string item = s.substr(start, plus == std::string::npos ? plus : plus - start);
    const size_t colon = item.find(':');
    const std::string slot_name = item.substr(0, colon);
    SlotNorm* slot = slot_name == "in"     ? &p.in
                     : slot_name == "out"  ? &p.out
                     : slot_name == "post" ? &p.post
                                           : nullptr;
    if (slot == nullptr) {
      throw UsageError(fmt::format("norm placement '{}': unknown slot '{}'; {}", printable(s),
                                   printable(slot_name), allowed));
    }
    if (slot->present) {
      throw UsageError(
          fmt::format("norm placement '{}': slot '{}' is given twice", printable(s), slot_name));
    }
    slot->present = true;
    if (colon != std::string::npos) {
      const NormKind kind = parse_norm_kind(item.substr(colon + 1));
      if (kind == NormKind::none) {
        throw UsageError(fmt::format(
            "norm placement '{}': a slot's kind cannot be none (leave the slot out instead)",
            printable(s)));
      }
      slot->kind = kind;
    }
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  return p;
}

NormKind default_norm_kind(Scheme scheme, NormKind fallback) {
  return scheme == Scheme::ngpt ? NormKind::l2 : fallback;
}

std::vector<std::string> scheme_names() {
  return all_names(kSchemes);
}
std::vector<std::string> norm_kind_names() {
  return all_names(kNorms);
}
std::vector<std::string> pos_encoding_names() {
  return all_names(kPos);
}

std::string scheme_label(const ModelConfig& c) {
  std::string label = to_string(c.scheme);
  if (c.scheme == Scheme::mix) label = fmt::format("mix({})", c.mix_layers);
  if (c.scheme == Scheme::block_attnres) label = fmt::format("block_attnres({})", c.block_size);
  // Placement overrides change the block, so they are part of its name: "post[attn=out]".
  if (!c.attn_norms.automatic) label += fmt::format("[attn={}]", to_string(c.attn_norms));
  if (!c.mlp_norms.automatic) label += fmt::format("[mlp={}]", to_string(c.mlp_norms));
  return label;
}

void validate(const ModelConfig& c) {
  auto require = [](bool ok, const std::string& message) {
    if (!ok) throw UsageError(message);
  };
  auto in_range = [&](int64_t value, IntRange r, const char* name) {
    require(value >= r.min && value <= r.max,
            fmt::format("{} must be an integer from {} to {} (got {})", name, r.min, r.max, value));
  };
  in_range(c.vocab, limits::vocab, "vocab");
  in_range(c.width, limits::width, "width");
  in_range(c.heads, limits::heads, "heads");
  require(c.width % c.heads == 0,
          fmt::format("heads must divide width: width {} is not a multiple of heads {}", c.width,
                      c.heads));
  in_range(c.layers, limits::layers, "layers");
  in_range(c.mlp_mult, limits::mlp_mult, "mlp_mult");
  in_range(c.max_len, limits::max_len, "max_len");
  if (c.scheme != Scheme::mix) in_range(c.mix_layers, limits::mix_layers, "mix_layers");
  in_range(c.block_size, limits::block_size, "block_size");
  // Reals: finite, and positive where the math divides by them or takes their root.
  auto positive = [&](double value, const char* name) {
    require(std::isfinite(value) && value > 0,
            fmt::format("{} must be a finite number above 0 (got {})", name, value));
  };
  positive(c.beta, "beta");
  positive(c.norm_eps, "norm_eps");
  positive(c.init_std, "init_std");
  positive(c.ngpt_alpha_init, "ngpt_alpha_init");
  require(std::isfinite(c.rope_base) && c.rope_base > 1,
          fmt::format("rope_base must be a finite number above 1 (got {})", c.rope_base));
  if (c.pos == PosEncoding::rope) {
    require(c.head_dim() % 2 == 0,
            fmt::format("rope needs an even head dimension; width {} / heads {} = {}", c.width,
                        c.heads, c.head_dim()));
  }
  if (c.norm == NormKind::none) {
    require(c.scheme == Scheme::pre,
            fmt::format("scheme {} needs a norm; --norm none is allowed only with scheme pre "
                        "(the unnormalized baseline); allowed norms: layernorm, rmsnorm, "
                        "standardize, l2, dyt, derf, scalenorm",
                        to_string(c.scheme)));
    require(c.embed_norm != Toggle::on && c.final_norm != Toggle::on,
            "--norm none cannot be combined with an embedding or final norm");
  }
  if (c.scheme == Scheme::mix) {
    require(c.mix_layers >= 0 && c.mix_layers <= c.layers,
            fmt::format("mix(k) needs 0 <= k <= layers; got k = {} with {} layers", c.mix_layers,
                        c.layers));
  }
  for (const auto& [placement, name] :
       {std::pair{&c.attn_norms, "attn_norms"}, std::pair{&c.mlp_norms, "mlp_norms"}}) {
    if (placement->automatic) continue;
    require(c.norm != NormKind::none,
            fmt::format("{} overrides the norms, which needs a norm kind: norm is none", name));
    require(c.scheme != Scheme::ngpt,
            fmt::format("{} cannot override ngpt's norms: its update needs both of them", name));
    const bool attnres = c.scheme == Scheme::attnres || c.scheme == Scheme::block_attnres;
    require(!(attnres && placement->post.present),
            fmt::format("{} = {}: AttnRes records each sublayer's output unnormalized, so "
                        "there is no 'post' slot; allowed slots: in, out",
                        name, to_string(*placement)));
  }
  require(c.mlp || c.mlp_norms.automatic,
          fmt::format("mlp_norms = {} needs an MLP sublayer (mlp is off)", to_string(c.mlp_norms)));
}

nlohmann::json to_json(const ModelConfig& c) {
  return nlohmann::json{
      {"vocab", c.vocab},
      {"width", c.width},
      {"heads", c.heads},
      {"layers", c.layers},
      {"mlp", c.mlp},
      {"mlp_mult", c.mlp_mult},
      {"activation", to_string(c.activation)},
      {"causal", c.causal},
      {"pos", to_string(c.pos)},
      {"max_len", c.max_len},
      {"rope_base", c.rope_base},
      {"beta", c.beta},
      {"tied", c.tied},
      {"final_norm", to_string(c.final_norm)},
      {"embed_norm", to_string(c.embed_norm)},
      {"scheme", to_string(c.scheme)},
      {"norm", to_string(c.norm)},
      {"mix_layers", c.mix_layers},
      {"block_size", c.block_size},
      {"norm_eps", c.norm_eps},
      {"init_std", c.init_std},
      {"scaled_residual_init", c.scaled_residual_init},
      {"ngpt_alpha_init", c.ngpt_alpha_init},
      {"attn_norms", to_string(c.attn_norms)},
      {"mlp_norms", to_string(c.mlp_norms)},
  };
}

ModelConfig model_config_from_json(const nlohmann::json& j) {
  ModelConfig c;
  const JsonFields f(j, "model config");
  try {
    c.vocab = static_cast<int>(f.integer("vocab", limits::vocab));
    c.width = static_cast<int>(f.integer("width", limits::width));
    c.heads = static_cast<int>(f.integer("heads", limits::heads));
    c.layers = static_cast<int>(f.integer("layers", limits::layers));
    c.mlp = f.boolean("mlp");
    c.mlp_mult = static_cast<int>(f.integer("mlp_mult", limits::mlp_mult));
    c.activation = parse_activation(f.string("activation"));
    c.causal = f.boolean("causal");
    c.pos = parse_pos_encoding(f.string("pos"));
    c.max_len = static_cast<int>(f.integer("max_len", limits::max_len));
    c.rope_base = f.real("rope_base");
    c.beta = f.real("beta");
    c.tied = f.boolean("tied");
    c.final_norm = parse_toggle(f.string("final_norm"));
    c.embed_norm = parse_toggle(f.string("embed_norm"));
    c.scheme = parse_scheme(f.string("scheme"));
    c.norm = parse_norm_kind(f.string("norm"));
    c.mix_layers = static_cast<int>(f.integer("mix_layers", limits::mix_layers));
    c.block_size = static_cast<int>(f.integer("block_size", limits::block_size));
    c.norm_eps = f.real("norm_eps");
    c.init_std = f.real("init_std");
    c.scaled_residual_init = f.boolean("scaled_residual_init");
    c.ngpt_alpha_init = f.real("ngpt_alpha_init");
    // Checkpoints written before placement overrides existed have neither field: "auto".
    if (j.contains("attn_norms")) c.attn_norms = parse_norm_placement(f.string("attn_norms"));
    if (j.contains("mlp_norms")) c.mlp_norms = parse_norm_placement(f.string("mlp_norms"));
  } catch (const UsageError& e) {
    throw InputError(fmt::format("model config: {}", printable(e.what(), 300)));
  }
  try {
    validate(c);
  } catch (const UsageError& e) {
    throw InputError(fmt::format("model config is invalid: {}", e.what()));
  }
  return c;
}

std::string describe(const ModelConfig& c) {
  std::string out;
  const nlohmann::json j = to_json(c);
  for (const auto& [key, value] : j.items()) {
    out += fmt::format("  {:<22} {}\n", key, value.dump());
  }
  return out;
}

}  // namespace normlab
