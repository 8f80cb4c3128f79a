// Unsigned integers of any size as little-endian bit vectors (bit 0 first), for the binary
// Chomsky-hierarchy tasks, whose operands reach hundreds of bits (the reference uses Python's
// integers).
#pragma once

#include <cstdint>
#include <vector>

#include "normlab/base/rng.hpp"

namespace normlab::chomsky {

using Bits = std::vector<int32_t>;  // each 0 or 1, least significant first

// Uniform on 1..2^len − 1, as exactly len bits (high zeros kept): Python's randint(1, 2^len − 1).
Bits random_nonzero(int64_t len, Rng& rng);
// Without its high-order zeros; 0 is {0}.
Bits trimmed(Bits x);
Bits add(const Bits& a, const Bits& b);       // trimmed
Bits multiply(const Bits& a, const Bits& b);  // trimmed
// ⌊√x⌋, trimmed (the binary digit-by-digit method).
Bits isqrt(const Bits& x);

}  // namespace normlab::chomsky
