// Rotary position embedding (RoFormer, Su et al. 2021) on the q and k parts of a packed qkv
// buffer (B, T, 3D). Within each head, feature pairs (2p, 2p+1) at position t are rotated by
//   θ_{t,p} = t · base^(−2p/dh):   (x0, x1) → (x0 cos θ − x1 sin θ, x0 sin θ + x1 cos θ)
// The backward pass is the inverse rotation (by −θ) applied to the gradient.
//
// Letters: B batch, T length, D width, H heads, dh = D / H.
#pragma once

#include <cstdint>
#include <vector>

namespace normlab {

// The factors of every (position, pair) of one shape, interleaved as the rotation reads them:
// even = (cos θ_{t,0}, sin θ_{t,0}, cos θ_{t,1}, …) and odd = (−sin θ_{t,0}, cos θ_{t,0}, …),
// (T, dh) each. Positions are offset, offset + 1, …, offset + T − 1.
template <typename T>
struct RopeTable {
  int64_t len = -1, offset = 0;
  int dh = 0;
  double base = 0;
  std::vector<T> even, odd;  // (T, dh)
};

// Fills `table` for (len, offset, dh, base), unless it already holds that shape (every layer's
// forward and backward of a step reads the same table).
template <typename T>
void prepare_rope_table(RopeTable<T>& table, int64_t len, int dh, double base, int64_t offset = 0);

// The packed qkv buffer a rotation acts on: (batch, len, 3 · width), heads dividing width.
struct QkvShape {
  int64_t batch, len;
  int width, heads;
};

enum class Rotation { forward, inverse };  // inverse: by −θ (the backward pass)

// Rotates q and k in place by the angles of `table`, whose len and dh must match `shape`.
template <typename T>
void rope_apply(T* qkv, QkvShape shape, const RopeTable<T>& table, Rotation rotation);

}  // namespace normlab
