// Cross-entropy against a target distribution at each scored position.
//
// logits, target: (N, V); weight: (N), 0 for unscored positions (1 for scored, or any weight).
//   loss = Σ_n w_n · Σ_v −p_nv log softmax(z_n)_v  /  Σ_n w_n
//   dz_nv = w_n · (softmax(z_n)_v · Σ_v p_nv − p_nv) / Σ_n w_n
// With Σ_n w_n = 0 the loss and gradient are 0.
#pragma once

#include <cstdint>

namespace normlab {

// Returns the loss and writes dlogits (N, V) (overwritten; may be null to skip it).
// target_slot (may be null): row n's target is target + target_slot[n]·V (−1: none, which
// requires weight 0); when null, target is dense (N, V).
template <typename T>
double cross_entropy(const T* logits, const T* target, const T* weight, T* dlogits, int64_t N,
                     int V, const int32_t* target_slot = nullptr);

}  // namespace normlab
