#include "normlab/model/model_config.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>

#include "normlab/base/errors.hpp"
#include "normlab/io/json_fields.hpp"
#include "normlab/io/nearest_name.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/model/model_fields.hpp"
#include "normlab/model/scheme.hpp"
#include "normlab/model/scheme_table.hpp"

namespace normlab {
namespace {

template <typename E>
struct Names {
  E value;
  const char* name;
};

constexpr Names<PosEncoding> kPos[] = {{PosEncoding::none, "none"},
                                       {PosEncoding::learned, "learned"},
                                       {PosEncoding::sinusoidal, "sinusoidal"},
                                       {PosEncoding::rope, "rope"},
                                       {PosEncoding::alibi, "alibi"},
                                       {PosEncoding::relative, "relative"}};
constexpr Names<Activation> kActivations[] = {{Activation::gelu, "gelu"},
                                              {Activation::relu, "relu"}};
constexpr Names<Toggle> kToggles[] = {
    {Toggle::automatic, "auto"}, {Toggle::on, "on"}, {Toggle::off, "off"}};
constexpr Names<QkNorm> kQkNorms[] = {
    {QkNorm::none, "none"}, {QkNorm::l2, "l2"}, {QkNorm::rmsnorm, "rmsnorm"}};
constexpr Names<WeightInit> kWeightInits[] = {{WeightInit::normal, "normal"},
                                              {WeightInit::truncated_fan_in, "truncated_fan_in"}};

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
  return scheme_row(s).name;
}
std::string to_string(NormKind k) {
  return norm_row(k).name;
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
std::string to_string(QkNorm q) {
  return name_of(kQkNorms, q);
}
std::string to_string(WeightInit w) {
  return name_of(kWeightInits, w);
}

Scheme parse_scheme(const std::string& s) {
  for (const SchemeRow& row : scheme_table()) {
    if (s == row.name) return row.scheme;
  }
  const std::string near = nearest_name(s, scheme_names());
  throw UsageError(fmt::format("unknown scheme '{}'; allowed: {}{}", printable(s),
                               fmt::join(scheme_names(), ", "),
                               near.empty() ? "" : "; did you mean " + near + "?"));
}
NormKind parse_norm_kind(const std::string& s) {
  for (const NormKindRow& row : kNormKinds) {
    if (s == row.name) return row.kind;
  }
  throw UsageError(fmt::format("unknown norm '{}'; allowed: {}", printable(s),
                               fmt::join(norm_kind_names(), ", ")));
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
QkNorm parse_qk_norm(const std::string& s) {
  return parse(kQkNorms, s, "qk_norm kind");
}
WeightInit parse_weight_init(const std::string& s) {
  return parse(kWeightInits, s, "weight_init");
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
  const NormKind own = scheme_row(scheme).default_norm;
  return own != NormKind::rmsnorm ? own : fallback;
}

std::vector<std::string> scheme_names() {
  std::vector<std::string> names;
  for (const SchemeRow& row : scheme_table()) names.emplace_back(row.name);
  return names;
}
std::vector<std::string> norm_kind_names() {
  std::vector<std::string> names;
  for (const NormKindRow& row : kNormKinds) names.emplace_back(row.name);
  return names;
}
std::vector<std::string> pos_encoding_names() {
  return all_names(kPos);
}
std::vector<std::string> qk_norm_names() {
  return all_names(kQkNorms);
}
std::vector<std::string> weight_init_names() {
  return all_names(kWeightInits);
}

std::string scheme_label(const ModelConfig& c) {
  const SchemeRow& row = scheme_row(c.scheme);
  std::string label = row.name;
  if (row.number) label += fmt::format("({})", c.*row.number.field);
  if (c.sinkhorn) label += "[sinkhorn]";
  // Placement overrides change the block, so they are part of its name: "post[attn=out]".
  if (!c.attn_norms.automatic) label += fmt::format("[attn={}]", to_string(c.attn_norms));
  if (!c.mlp_norms.automatic) label += fmt::format("[mlp={}]", to_string(c.mlp_norms));
  if (!c.placement.empty()) label += fmt::format("[{}]", to_string(c.placement));
  if (c.qk_norm != QkNorm::none) label += fmt::format("[qk={}]", to_string(c.qk_norm));
  return label;
}

namespace {

constexpr char kSchemeRevisionKey[] = "scheme_revision";

// Writes each field under its name: numbers and booleans as themselves, words as text. A
// field marked omit_default is left out at its default (ModelConfig{}'s value).
struct JsonWriter {
  nlohmann::json& j;
  template <typename V, typename Range>
  void operator()(const FieldInfo& f, const V& value, Range) {
    if (f.omit_default && value == default_of<V>(f)) return;
    j[f.name] = value;
  }
  void operator()(const FieldInfo& f, const bool& value) {
    if (f.omit_default && value == default_of<bool>(f)) return;
    j[f.name] = value;
  }
  // The default of a number or boolean field, found by name in a default config.
  template <typename V>
  static V default_of(const FieldInfo& f) {
    V out{};
    const ModelConfig defaults;
    visit_model_fields(defaults, DefaultFinder<V>{f.name, out});
    return out;
  }
  template <typename V>
  struct DefaultFinder {
    const char* name;
    V& out;
    template <typename E>
    void operator()(const FieldInfo&, const E&) {}
    template <typename U, typename Range>
    void operator()(const FieldInfo& f, const U& value, Range) {
      if constexpr (std::is_same_v<U, V>) {
        if (std::string_view(f.name) == name) out = value;
      }
    }
    void operator()(const FieldInfo& f, const bool& value) {
      if constexpr (std::is_same_v<bool, V>) {
        if (std::string_view(f.name) == name) out = value;
      }
    }
  };
  template <typename E>
  void operator()(const FieldInfo& f, const E& value) {
    const std::string text = to_string(value);
    if (f.omit_default && text == to_string(E{})) return;
    j[f.name] = text;
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
  // Hyper-connections' fields belong to their row: elsewhere they keep their defaults.
  if (scheme_row(c.scheme).residual_mode != ResidualMode::hyper) {
    require(c.streams == ModelConfig{}.streams,
            fmt::format("streams = {} applies only to scheme hyper_connections (got scheme {})",
                        c.streams, to_string(c.scheme)));
    require(!c.sinkhorn, fmt::format("sinkhorn applies only to scheme hyper_connections (got "
                                     "scheme {})",
                                     to_string(c.scheme)));
  }
  require(c.width % c.heads == 0,
          fmt::format("heads must divide width: width {} is not a multiple of heads {}", c.width,
                      c.heads));
  if (c.pos == PosEncoding::rope) {
    require(c.head_dim() % 2 == 0,
            fmt::format("rope needs an even head dimension; width {} / heads {} = {}", c.width,
                        c.heads, c.head_dim()));
  }
  if (c.pos == PosEncoding::relative) {  // p_δ is sines then cosines (core/kernels/relative.hpp)
    require(c.width % 2 == 0,
            fmt::format("relative needs an even width (its sinusoid of distances has sine and "
                        "cosine halves); got width {}",
                        c.width));
  }
  const SchemeRow& row = scheme_row(c.scheme);
  if (c.norm == NormKind::none) {
    std::vector<std::string> kinds = norm_kind_names();
    std::erase(kinds, "none");
    require(row.norm_none_allowed,
            fmt::format("scheme {} needs a norm; --norm none is allowed only with scheme pre "
                        "(the unnormalized baseline) and the schemes without norms (rezero, "
                        "custom); allowed norms: {}",
                        row.name, fmt::join(kinds, ", ")));
    require(c.embed_norm != Toggle::on && c.final_norm != Toggle::on,
            "--norm none cannot be combined with an embedding or final norm");
  }
  // The overrides, each with the name the user wrote.
  std::vector<std::pair<std::string, PlacementRule>> overrides;
  if (!c.attn_norms.automatic) {
    overrides.push_back(
        {"attn_norms", PlacementRule::norms_of(PlacementRule::Target::attn, c.attn_norms)});
  }
  if (!c.mlp_norms.automatic) {
    overrides.push_back(
        {"mlp_norms", PlacementRule::norms_of(PlacementRule::Target::mlp, c.mlp_norms)});
  }
  for (const PlacementRule& rule : c.placement.rules) overrides.push_back({"placement", rule});
  for (const auto& [name, rule] : overrides) {
    require(row.overrides_allowed,
            fmt::format("{} cannot change scheme {}, which takes no overrides: its block is "
                        "defined with exactly its own norms",
                        name, row.name));
    const bool slot_without_kind =
        rule.norms && ((rule.norms->in.present && !rule.norms->in.kind) ||
                       (rule.norms->out.present && !rule.norms->out.kind) ||
                       (rule.norms->post.present && !rule.norms->post.kind));
    require(c.norm != NormKind::none || !slot_without_kind,
            fmt::format("{} places a norm of the model's kind, but norm is none; give the slot "
                        "a kind (e.g. out:layernorm) or choose a norm",
                        name));
    require(
        c.mlp || rule.target != PlacementRule::Target::mlp,
        fmt::format("{} sets the MLP sublayers, which needs an MLP sublayer (mlp is off)", name));
    const bool ranged = rule.first_layer != 0 || rule.end_layer != std::numeric_limits<int>::max();
    require(!ranged ||
                (rule.first_layer < c.layers &&
                 (rule.end_layer == std::numeric_limits<int>::max() || rule.end_layer <= c.layers)),
            fmt::format("{}: the layer range [{}:{}] is not inside the model's {} layers "
                        "(0 to {})",
                        name, rule.first_layer,
                        rule.end_layer == std::numeric_limits<int>::max()
                            ? std::string()
                            : std::to_string(rule.end_layer),
                        c.layers, c.layers - 1));
  }
  if (mixes_over_depth(row.residual_mode)) {
    for (const SublayerSlots& slots : resolve_scheme(c).sublayers) {
      require(!slots.norm_post,
              "AttnRes records each sublayer's output unnormalized, so there is no 'post' "
              "slot; allowed slots: in, out");
      require(
          slots.residual == ScaleSpec{} && slots.branch == ScaleSpec{} && slots.input_scale == 1.0,
          "AttnRes mixes the records with learned weights: residual, branch and input "
          "scales are not allowed");
    }
  }
  require(c.mlp || !c.mlp_bias, "mlp_bias needs an MLP sublayer (mlp is off)");
  require(c.mlp || c.mlp_norms.automatic,
          fmt::format("mlp_norms = {} needs an MLP sublayer (mlp is off)", to_string(c.mlp_norms)));
  // QK-norm adds per-head norms inside attention; a row that places its own (HybridNorm's
  // q/k/v norms, nGPT's q/k) or takes no other overrides keeps its attention as it is.
  if (c.qk_norm != QkNorm::none) {
    require(!row.sphere_qk,
            fmt::format("qk_norm = {} cannot change scheme {}: it normalizes q and k itself (each "
                        "head to the unit sphere after RoPE, times its learnable s_qk); allowed "
                        "with {}: qk_norm = none",
                        to_string(c.qk_norm), row.name, row.name));
    require(row.head_norms == HeadNormRule::none,
            fmt::format("qk_norm = {} cannot change scheme {}: it normalizes q, k and v itself "
                        "(with the model's norm); allowed with {}: qk_norm = none",
                        to_string(c.qk_norm), row.name, row.name));
    require(row.overrides_allowed,
            fmt::format("qk_norm = {} cannot change scheme {}, which takes no overrides; allowed "
                        "with {}: qk_norm = none",
                        to_string(c.qk_norm), row.name, row.name));
  }
}

nlohmann::json to_json(const ModelConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  visit_model_fields(c, JsonWriter{j});
  // The scheme row's revision (scheme_table.hpp), beside the fields: the code's, not a
  // choice, so no field of its own (model_fields.hpp). Only above 1, so that the configs of
  // schemes never revised stay as they were.
  const int revision = scheme_row(c.scheme).revision;
  if (revision > 1) j[kSchemeRevisionKey] = revision;
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
  // A model of another revision of its scheme computes something else: refused before its
  // layout is compared with any tensors.
  const SchemeRow& row = scheme_row(c.scheme);
  const int64_t revision =
      f.has(kSchemeRevisionKey) ? f.integer(kSchemeRevisionKey, IntRange{1, 1 << 20}) : 1;
  if (revision != row.revision) {
    throw InputError(fmt::format(
        "model config: this model was made with {} revision {}{}; this normlab implements "
        "revision {}; retrain it",
        row.name, revision, revision < row.revision ? row.earlier_revisions_lack : "",
        row.revision));
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
