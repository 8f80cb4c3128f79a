// modular_arithmetic's expression value (modular_arithmetic.cpp), for its tests.
#pragma once

#include <cstdint>
#include <vector>

namespace normlab::chomsky {

// Tokens of modular_arithmetic: digits 0..4, then the operators.
inline constexpr int32_t kPlus = 5, kMinus = 6, kTimes = 7;

// The value mod 5 (0..4) of d op d op ... d, with * before + and −.
int32_t modular_value(const std::vector<int32_t>& expression);

}  // namespace normlab::chomsky
