// Hooks on named activations. Names and shapes follow TransformerLens (docs/python.md, "Hooks"):
// "blocks.0.attn.hook_pattern" (B, H, T, T), "blocks.1.ln2.hook_scale" (B, T, 1).
//
// Forward hooks (Model::set_forward_hooks): the training forward offers each activation, and a
// hook may change it (interventions: ablate, patch, scale). A site asks wants(name) first, so an
// activation the forward does not keep (the attention scores, a norm's scale) is formed only
// when a hook sits there. When visit reports a change, the forward continues from the changed
// values: a changed scale renormalizes its rows, changed scores are softmaxed again, a changed
// pattern is applied to v again.
//
// Gradient hooks (Model::set_gradient_hooks): the backward offers dL/d(the activation at each
// name), shaped as the activation, to read (changes are ignored).
//
// Without hooks a site costs one null test (bench/python_overhead.py measures it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace normlab {

template <typename T>
class ActivationHooks {
 public:
  virtual ~ActivationHooks() = default;
  // Whether a hook sits at `name`.
  virtual bool wants(const std::string& name) = 0;
  // The values at `name`, in C order with `shape`; a forward hook may change them in place.
  // Returns whether any value changed (bitwise).
  virtual bool visit(const std::string& name, T* values, const std::vector<int64_t>& shape) = 0;
};

}  // namespace normlab
