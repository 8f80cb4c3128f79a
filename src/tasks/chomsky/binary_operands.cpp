// The binary tasks' operands (binary_operands.hpp).
#include "tasks/chomsky/binary_operands.hpp"

#include <stdexcept>

namespace normlab::chomsky {

Operands draw_operands(int64_t L, Rng& rng) {
  Operands x;
  if (L <= 2) {
    const uint64_t value = rng.below((uint64_t{1} << L) - 1);
    x.short_input = true;
    for (int64_t i = 0; i < L; ++i) x.n.push_back(static_cast<int32_t>((value >> i) & 1));
    x.input = x.n;
    return x;
  }
  const int64_t ln = 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(L - 2)));
  x.n = random_nonzero(ln, rng);
  x.m = random_nonzero(L - 1 - ln, rng);
  x.input = x.n;
  x.input.push_back(kSeparator);
  x.input.insert(x.input.end(), x.m.begin(), x.m.end());
  return x;
}

void terminate(std::vector<int32_t>& answer, int64_t length) {
  answer.push_back(kEnd);
  if (static_cast<int64_t>(answer.size()) > length) {
    throw std::logic_error("binary task: the answer is longer than its output");
  }
  answer.resize(length, 0);
}

}  // namespace normlab::chomsky
