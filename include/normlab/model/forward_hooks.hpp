// Forward hooks: the training forward offers named activations to code that reads them and may
// change them (interventions: ablate, patch, scale). Names and shapes follow TransformerLens
// (docs/python.md, "Hooks"): "blocks.0.attn.hook_pattern" (B, H, T, T), "blocks.1.ln2.hook_scale"
// (B, T, 1). Model::set_forward_hooks installs one; without one the forward offers nothing and
// pays one null test per site (bench/python_overhead.py measures it).
//
// A site asks wants(name) first, so an activation the forward does not keep (the attention
// scores, a norm's scale) is formed only when a hook sits there. When visit reports a change,
// the forward continues from the changed values: a changed scale renormalizes its rows, changed
// scores are softmaxed again, a changed pattern is applied to v again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace normlab {

template <typename T>
class ForwardHooks {
 public:
  virtual ~ForwardHooks() = default;
  // Whether a hook sits at `name`.
  virtual bool wants(const std::string& name) = 0;
  // The activation at `name`, in C order with `shape`; the hook may change `values` in place.
  // Returns whether any value changed (bitwise).
  virtual bool visit(const std::string& name, T* values, const std::vector<int64_t>& shape) = 0;
};

}  // namespace normlab
