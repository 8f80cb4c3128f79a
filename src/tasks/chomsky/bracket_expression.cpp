// The bracketed expressions (bracket_expression.hpp).
#include "tasks/chomsky/bracket_expression.hpp"

#include <stdexcept>

namespace normlab::chomsky {

namespace {

int32_t mod5(int64_t x) {
  return static_cast<int32_t>(((x % 5) + 5) % 5);
}

}  // namespace

Expression bracket_expression(int64_t L, bool multiply, Rng& rng) {
  if (L < 1) throw std::logic_error("bracket_expression: length at least 1");
  auto digit = [&] { return static_cast<int32_t>(rng.below(5)); };
  if (L <= 4) {
    const int32_t d = digit();
    const std::string s(1, static_cast<char>('0' + d));
    switch (L) {
      case 1:
        return {s, d};
      case 2:
        return {"-" + s, mod5(-d)};
      case 3:
        return {"(" + s + ")", d};
      default:
        return {"(-" + s + ")", mod5(-d)};
    }
  }
  const int64_t left = 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(L - 4)));
  const int64_t right = L - 3 - left;
  const uint64_t op = rng.below(multiply ? 3 : 2);  // 0 +, 1 −, 2 *
  const Expression a = bracket_expression(left, multiply, rng);
  const Expression b = bracket_expression(right, multiply, rng);
  const char ops[3] = {'+', '-', '*'};
  const int32_t value = op == 0   ? mod5(a.value + b.value)
                        : op == 1 ? mod5(a.value - b.value)
                                  : mod5(a.value * b.value);
  return {"(" + a.text + ops[op] + b.text + ")", value};
}

}  // namespace normlab::chomsky
