#include "normlab/model/placement.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "normlab/base/errors.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/model/model_config.hpp"

namespace normlab {
namespace {

constexpr const char* kGrammar =
    "a placement is rules joined by ';', each TARGET: SETTING, SETTING ...; targets all, "
    "attn, mlp (optionally [FIRST:END], layers FIRST to END-1), embed, final; sublayer "
    "settings: none or slots in, out, post joined by '+' (each optionally ':KIND'), "
    "residual=S, branch=S, input=S with S a number, 1/sqrt(l+1), vector(INIT) or "
    "scalar(INIT); embed and final settings: on, off (docs/schemes.md)";

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(trim(s.substr(start, at == std::string::npos ? at : at - start)));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

[[noreturn]] void fail(const std::string& text, const std::string& what) {
  throw UsageError(fmt::format("placement '{}': {}; {}", printable(text, 120), what, kGrammar));
}

// A finite number written whole (from_chars: no locale, no leading '+').
std::optional<double> number(const std::string& s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int> layer_index(const std::string& s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

ScaleSpec parse_scale(const std::string& text, const std::string& s) {
  if (s == "1/sqrt(l+1)") return {ScaleKind::inverse_sqrt_layer, 1.0};
  for (const auto& [prefix, kind] :
       {std::pair{"vector(", ScaleKind::vector}, std::pair{"scalar(", ScaleKind::scalar}}) {
    const std::string p = prefix;
    if (s.rfind(p, 0) == 0 && s.back() == ')') {
      const auto init = number(s.substr(p.size(), s.size() - p.size() - 1));
      if (!init) fail(text, fmt::format("'{}' needs a finite initial value", printable(s)));
      return {kind, *init};
    }
  }
  const auto v = number(s);
  if (!v) fail(text, fmt::format("'{}' is not a scale", printable(s)));
  return {ScaleKind::constant, *v};
}

std::string scale_text(const ScaleSpec& s) {
  switch (s.kind) {
    case ScaleKind::constant:
      return fmt::format("{}", s.value);
    case ScaleKind::inverse_sqrt_layer:
      return "1/sqrt(l+1)";
    case ScaleKind::vector:
      return fmt::format("vector({})", s.value);
    case ScaleKind::scalar:
      return fmt::format("scalar({})", s.value);
  }
  return "?";
}

// "attn[0:2]" → target and layer range.
void parse_target(const std::string& text, const std::string& s, PlacementRule& rule) {
  using Target = PlacementRule::Target;
  std::string name = s;
  const size_t open = s.find('[');
  if (open != std::string::npos) {
    name = trim(s.substr(0, open));
    if (s.back() != ']') fail(text, fmt::format("'{}': a layer range ends with ']'", printable(s)));
    const std::string range = s.substr(open + 1, s.size() - open - 2);
    const size_t colon = range.find(':');
    if (colon == std::string::npos) {
      fail(text, fmt::format("'{}': a layer range is [FIRST:END] or [FIRST:]", printable(s)));
    }
    const auto first = layer_index(trim(range.substr(0, colon)));
    const std::string end_text = trim(range.substr(colon + 1));
    const auto end = end_text.empty() ? std::optional<int>(rule.end_layer) : layer_index(end_text);
    if (!first || !end || *end < *first) {
      fail(text,
           fmt::format("'{}': FIRST and END are layer indices with FIRST <= END", printable(s)));
    }
    rule.first_layer = *first;
    rule.end_layer = *end;
  }
  if (name == "all") {
    rule.target = Target::all;
  } else if (name == "attn") {
    rule.target = Target::attn;
  } else if (name == "mlp") {
    rule.target = Target::mlp;
  } else if (name == "embed" || name == "final") {
    rule.target = name == "embed" ? Target::embed : Target::final;
    if (open != std::string::npos) fail(text, fmt::format("'{}' takes no layer range", name));
  } else {
    fail(text, fmt::format("unknown target '{}'", printable(name)));
  }
}

const char* target_name(PlacementRule::Target t) {
  switch (t) {
    case PlacementRule::Target::all:
      return "all";
    case PlacementRule::Target::attn:
      return "attn";
    case PlacementRule::Target::mlp:
      return "mlp";
    case PlacementRule::Target::embed:
      return "embed";
    case PlacementRule::Target::final:
      return "final";
  }
  return "?";
}

}  // namespace

Placement parse_placement(const std::string& text) {
  Placement p;
  if (trim(text).empty()) return p;
  for (const std::string& rule_text : split(text, ';')) {
    if (rule_text.empty()) continue;  // "a; b;" and "a;; b" are fine
    // The colon after the target (a layer range [FIRST:END] has one of its own).
    const size_t close = rule_text.find(']');
    const size_t colon = rule_text.find(':', close == std::string::npos ? 0 : close);
    if (colon == std::string::npos) {
      fail(text, fmt::format("rule '{}' has no ':'", printable(rule_text)));
    }
    PlacementRule rule;
    parse_target(text, trim(rule_text.substr(0, colon)), rule);
    const bool stream =
        rule.target == PlacementRule::Target::embed || rule.target == PlacementRule::Target::final;
    for (const std::string& setting : split(rule_text.substr(colon + 1), ',')) {
      if (stream) {
        if (setting != "on" && setting != "off") {
          fail(text, fmt::format("{}: '{}'; allowed: on, off", target_name(rule.target),
                                 printable(setting)));
        }
        if (rule.on)
          fail(text, fmt::format("{} is given twice in one rule", target_name(rule.target)));
        rule.on = setting == "on";
        continue;
      }
      const size_t eq = setting.find('=');
      if (eq == std::string::npos) {
        if (rule.norms) fail(text, fmt::format("two norm settings in rule '{}'", rule_text));
        try {
          rule.norms = parse_norm_placement(setting);
        } catch (const UsageError& e) {
          fail(text, e.what());
        }
        if (rule.norms->automatic) fail(text, "'auto' is not a placement of norms");
        continue;
      }
      const std::string key = trim(setting.substr(0, eq));
      const ScaleSpec scale = parse_scale(text, trim(setting.substr(eq + 1)));
      std::optional<ScaleSpec>* slot = key == "residual" ? &rule.residual
                                       : key == "branch" ? &rule.branch
                                       : key == "input"  ? &rule.input
                                                         : nullptr;
      if (slot == nullptr) fail(text, fmt::format("unknown setting '{}'", printable(key)));
      if (*slot) fail(text, fmt::format("{} is given twice in one rule", key));
      if (key == "input" && (scale.kind == ScaleKind::vector || scale.kind == ScaleKind::scalar)) {
        fail(text, "input takes a constant or 1/sqrt(l+1), not a learnable scale");
      }
      *slot = scale;
    }
    p.rules.push_back(rule);
  }
  return p;
}

std::string to_string(const Placement& p) {
  std::vector<std::string> rules;
  for (const PlacementRule& r : p.rules) {
    std::string target = target_name(r.target);
    if (r.first_layer != 0 || r.end_layer != std::numeric_limits<int>::max()) {
      target += r.end_layer == std::numeric_limits<int>::max()
                    ? fmt::format("[{}:]", r.first_layer)
                    : fmt::format("[{}:{}]", r.first_layer, r.end_layer);
    }
    std::vector<std::string> settings;
    if (r.on) settings.push_back(*r.on ? "on" : "off");
    if (r.norms) settings.push_back(to_string(*r.norms));
    if (r.residual) settings.push_back("residual=" + scale_text(*r.residual));
    if (r.branch) settings.push_back("branch=" + scale_text(*r.branch));
    if (r.input) settings.push_back("input=" + scale_text(*r.input));
    rules.push_back(fmt::format("{}: {}", target, fmt::join(settings, ", ")));
  }
  return fmt::format("{}", fmt::join(rules, "; "));
}

}  // namespace normlab
