// The placement language: where the norms sit and how the residual add is scaled, per kind of
// sublayer and per range of layers (docs/schemes.md, "Placements").
//
// Every named scheme is a preset written in this language (scheme_table.hpp); users write the
// same text as the model field `placement`, in TOML (`placement = "..."`) or on the command
// line (`--placement "..."`). Rules apply in order, the later over the earlier, and each sets
// only what it names:
//
//   placement = rule { ";" rule }
//   rule      = target ":" setting { "," setting }
//   target    = ("all" | "attn" | "mlp") [ "[" FIRST ":" [END] "]" ]     layers FIRST .. END-1
//             | "embed" | "final"                                         the stream's two norms
//   setting   = norms                            sublayers: which norms, see below
//             | "residual=" scale                sublayers: the factor on x in the add
//             | "branch=" scale                  sublayers: the factor on the branch output
//             | "input=" scale                   sublayers: the factor on the branch input
//             | "on" | "off"                     embed, final
//   norms     = "none" | slot { "+" slot }       slot = ("in" | "out" | "post") [":" KIND]
//   scale     = NUMBER | "1/sqrt(l+1)"           constants (l the layer from 0)
//             | "vector(" NUMBER ")"             learnable, one per feature (D), with its init
//             | "scalar(" NUMBER ")"             learnable, one number, with its init
//
// Example: "all: in, branch=vector(0.1); attn[0:2]: post; final: on".
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "normlab/base/norm_kind.hpp"

namespace normlab {

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

// A factor in the residual update: constant, or learnable with an init.
enum class ScaleKind {
  constant,            // `value`
  inverse_sqrt_layer,  // 1 / sqrt(l + 1)
  vector,              // learnable (D), init `value`
  scalar               // learnable (1), init `value`
};

struct ScaleSpec {
  ScaleKind kind = ScaleKind::constant;
  double value = 1.0;
  bool operator==(const ScaleSpec&) const = default;
};

// One rule of a placement.
struct PlacementRule {
  enum class Target { all, attn, mlp, embed, final };
  Target target = Target::all;
  int first_layer = 0;                               // sublayer targets: layers [first, end)
  int end_layer = std::numeric_limits<int>::max();   // max: to the last layer
  std::optional<NormPlacement> norms;                // sublayers: the three slots
  std::optional<ScaleSpec> residual, branch, input;  // sublayers: the add's factors
  std::optional<bool> on;                            // embed, final: the norm present or not

  // A rule that sets only the three norm slots of `target`'s sublayers (all layers).
  static PlacementRule norms_of(Target target, const NormPlacement& norms) {
    PlacementRule rule;
    rule.target = target;
    rule.norms = norms;
    return rule;
  }
};

struct Placement {
  std::vector<PlacementRule> rules;
  bool empty() const { return rules.empty(); }
};

// Throws UsageError naming the rule, the word and what is allowed.
Placement parse_placement(const std::string& text);
// The canonical text: parse_placement(to_string(p)) gives p back, numbers exactly.
std::string to_string(const Placement& p);

}  // namespace normlab
