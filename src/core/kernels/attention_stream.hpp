// Inference attention for long sequences: an online softmax over blocks of keys
// (Milakov & Gimelshein 2018; FlashAttention), so no (T, T) matrix is ever stored and
// memory stays O(T·D). Only the listed query rows are computed.
//
// For one query q and head h, over key blocks J:
//   m' = max(m, max_{j∈J} s_j),  l' = l·e^(m−m') + Σ_{j∈J} e^(s_j−m'),
//   acc' = acc·e^(m−m') + Σ_{j∈J} e^(s_j−m') v_j;   o = acc / l at the end.
// qkv layout and scale as in attention.hpp.
#pragma once

#include <cstdint>

#include "core/kernels/attention.hpp"

namespace normlab {

// rows: R row indices n = b·T + t (ascending) whose outputs are wanted.
// o: (R, D) outputs, heads concatenated, in the order of `rows`. `relative`: Transformer-XL's
// terms (relative.hpp), or null.
template <typename T>
void attention_stream(const AttentionShape& s, const T* qkv, const int64_t* rows, int64_t R, T* o,
                      const RelativeLogits<T>* relative = nullptr);

}  // namespace normlab
