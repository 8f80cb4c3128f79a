// Rotary position embedding (RoFormer, Su et al. 2021) on the q and k parts of a packed qkv
// buffer (B, T, 3D). Within each head, feature pairs (2p, 2p+1) at position t are rotated by
//   θ_{t,p} = t · base^(−2p/dh):   (x0, x1) → (x0 cos θ − x1 sin θ, x0 sin θ + x1 cos θ)
// The backward pass is the inverse rotation (by −θ) applied to the gradient.
#pragma once

#include <cstdint>

namespace normlab {

// Rotates q and k in place. inverse = true rotates by −θ (the backward pass).
// offset: position of the first row (for evaluating a slice of a longer sequence).
template <typename T>
void rope_apply(T* qkv, int64_t batch, int64_t len, int width, int heads, double base, bool inverse,
                int64_t offset = 0);

}  // namespace normlab
