#include "normlab/model_config.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "normlab/errors.hpp"
#include "normlab/json_fields.hpp"
#include "normlab/model_fields.hpp"
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
Toggle parse_toggle(const std::string& s) {
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

namespace {

// Writes each field under its name: numbers and booleans as themselves, words as text.
struct JsonWriter {
  nlohmann::json& j;
  template <typename V, typename Range>
  void operator()(const FieldInfo& f, const V& value, Range) {
    j[f.name] = value;
  }
  void operator()(const FieldInfo& f, const bool& value) { j[f.name] = value; }
  template <typename E>
  void operator()(const FieldInfo& f, const E& value) {
    j[f.name] = to_string(value);
  }
};

// Reads each field exactly (JsonFields); a field marked optional_json keeps its default when
// absent (checkpoints written before it existed).
struct JsonReader {
  const nlohmann::json& j;
  const JsonFields& fields;
  bool skip(const FieldInfo& f) const { return f.optional_json && !j.contains(f.name); }
  void operator()(const FieldInfo& f, int& value, IntRange range) {
    if (!skip(f)) value = static_cast<int>(fields.integer(f.name, range));
  }
  void operator()(const FieldInfo& f, double& value, RealRange) {
    if (!skip(f)) value = fields.real(f.name);  // validate() checks the range
  }
  void operator()(const FieldInfo& f, bool& value) {
    if (!skip(f)) value = fields.boolean(f.name);
  }
  template <typename E>
  void operator()(const FieldInfo& f, E& value) {
    if (!skip(f)) parse_field(fields.string(f.name), value);
  }
};

// The range checks of validate(): every number inside the range its field declares.
struct RangeCheck {
  template <typename E>
  void operator()(const FieldInfo&, const E&) {}
  void operator()(const FieldInfo& f, const int& value, IntRange r) {
    if (!r.contains(value)) {
      throw UsageError(
          fmt::format("{} must be an integer from {} to {} (got {})", f.name, r.min, r.max, value));
    }
  }
  void operator()(const FieldInfo& f, const double& value, RealRange r) {
    if (r.contains(value)) return;
    const std::string allowed = !r.min_inclusive && r.max == kUnbounded
                                    ? fmt::format("above {}", r.min)
                                    : fmt::format("in {}", r.describe());
    throw UsageError(fmt::format("{} must be a finite number {} (got {})", f.name, allowed, value));
  }
};

}  // namespace

void validate(const ModelConfig& c) {
  auto require = [](bool ok, const std::string& message) {
    if (!ok) throw UsageError(message);
  };
  if (c.scheme == Scheme::mix) {
    require(c.mix_layers >= 0 && c.mix_layers <= c.layers,
            fmt::format("mix(k) needs 0 <= k <= layers; got k = {} with {} layers", c.mix_layers,
                        c.layers));
  }
  visit_model_fields(c, RangeCheck{});
  require(c.width % c.heads == 0,
          fmt::format("heads must divide width: width {} is not a multiple of heads {}", c.width,
                      c.heads));
  if (c.pos == PosEncoding::rope) {
    require(c.head_dim() % 2 == 0,
            fmt::format("rope needs an even head dimension; width {} / heads {} = {}", c.width,
                        c.heads, c.head_dim()));
  }
  if (c.norm == NormKind::none) {
    require(c.scheme == Scheme::pre,
            fmt::format("scheme {} needs a norm; --norm none is allowed only with scheme pre "
                        "(the unnormalized baseline); allowed norms: layernorm, rmsnorm, "
                        "standardize, l2",
                        to_string(c.scheme)));
    require(c.embed_norm != Toggle::on && c.final_norm != Toggle::on,
            "--norm none cannot be combined with an embedding or final norm");
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
  nlohmann::json j = nlohmann::json::object();
  visit_model_fields(c, JsonWriter{j});
  return j;
}

ModelConfig model_config_from_json(const nlohmann::json& j) {
  ModelConfig c;
  const JsonFields f(j, "model config");
  try {
    visit_model_fields(c, JsonReader{j, f});
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
