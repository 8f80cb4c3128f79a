// The inputs of binary_addition and binary_multiplication (their reference files draw them the
// same way, docs/benchmarks/chomsky_hierarchy.md §2.2).
#pragma once

#include <cstdint>
#include <vector>

#include "normlab/base/rng.hpp"
#include "tasks/chomsky/bits.hpp"

namespace normlab::chomsky {

inline constexpr int32_t kSeparator = 2;  // the input's operator token
inline constexpr int32_t kEnd = 2;        // the answer's termination class

struct Operands {
  Bits input;                // (L) ids
  Bits n, m;                 // little-endian, as written (high zeros kept)
  bool short_input = false;  // L ≤ 2: n alone, no operator, m empty
};

// L ≤ 2: n uniform on 0..2^L − 2 (numpy's randint(0, 2^L − 1)) as L bits. Else ln uniform on
// 1..L−2, lm = L − 1 − ln, n and m uniform on 1..2^l − 1 as l bits each, input n 2 m.
Operands draw_operands(int64_t L, Rng& rng);

// answer ++ [kEnd] ++ 0s, to `length` classes.
void terminate(std::vector<int32_t>& answer, int64_t length);

}  // namespace normlab::chomsky
