// The bracketed expressions of modular_arithmetic_brackets and solve_equation (their reference
// files share one generator, docs/benchmarks/chomsky_hierarchy.md §2.2, tasks 7 and 8).
#pragma once

#include <cstdint>
#include <string>

#include "normlab/base/rng.hpp"

namespace normlab::chomsky {

struct Expression {
  std::string text;  // digits 0-4, + - * ( ), exactly the requested length
  int32_t value;     // its value mod 5, in 0..4
};

// The reference's recursive generator for length L ≥ 1: "d" (L = 1), "-d" (2), "(d)" (3),
// "(-d)" (4), else "(" left op right ")" with the left length uniform on 1..L−4, op uniform
// over + − (and * with `multiply`), d uniform on 0..4.
Expression bracket_expression(int64_t L, bool multiply, Rng& rng);

}  // namespace normlab::chomsky
