// Bit-vector integers (bits.hpp).
#include "tasks/chomsky/bits.hpp"

#include <algorithm>

namespace normlab::chomsky {

Bits random_nonzero(int64_t len, Rng& rng) {
  Bits x(len);
  for (;;) {  // rejection of 0 keeps the rest uniform
    bool any = false;
    for (auto& b : x) any |= (b = static_cast<int32_t>(rng.below(2))) != 0;
    if (any) return x;
  }
}

Bits trimmed(Bits x) {
  while (x.size() > 1 && x.back() == 0) x.pop_back();
  if (x.empty()) x.push_back(0);
  return x;
}

Bits add(const Bits& a, const Bits& b) {
  Bits sum(std::max(a.size(), b.size()) + 1, 0);
  int32_t carry = 0;
  for (size_t i = 0; i < sum.size(); ++i) {
    const int32_t s = (i < a.size() ? a[i] : 0) + (i < b.size() ? b[i] : 0) + carry;
    sum[i] = s & 1;
    carry = s >> 1;
  }
  return trimmed(sum);
}

Bits multiply(const Bits& a, const Bits& b) {
  Bits product(a.size() + b.size() + 1, 0);
  for (size_t j = 0; j < b.size(); ++j) {
    if (b[j] == 0) continue;
    int32_t carry = 0;
    for (size_t i = 0; i < a.size() || carry != 0; ++i) {
      const int32_t s = product[i + j] + (i < a.size() ? a[i] : 0) + carry;
      product[i + j] = s & 1;
      carry = s >> 1;
    }
  }
  return trimmed(product);
}

namespace {

// a ≥ b, for trimmed or untrimmed operands.
bool at_least(const Bits& a, const Bits& b) {
  for (size_t i = std::max(a.size(), b.size()); i-- > 0;) {
    const int32_t x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x > y;
  }
  return true;
}

// a − b for a ≥ b, in place.
void subtract(Bits& a, const Bits& b) {
  int32_t borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int32_t d = a[i] - (i < b.size() ? b[i] : 0) - borrow;
    borrow = d < 0;
    a[i] = d & 1;
  }
}

}  // namespace

// Two bits of x at a time from the top: r = 4r + (those bits); t = 4·root + 1; if r ≥ t then
// r −= t and the root's next bit is 1 (root = 2·root + 1), else 0.
Bits isqrt(const Bits& x) {
  const size_t pairs = (x.size() + 1) / 2;
  Bits r, root;  // little-endian, r the remainder
  for (size_t p = pairs; p-- > 0;) {
    const int32_t hi = 2 * p + 1 < x.size() ? x[2 * p + 1] : 0, lo = x[2 * p];
    r.insert(r.begin(), {lo, hi});
    Bits t = root;
    t.insert(t.begin(), {1, 0});  // 4·root + 1
    if (at_least(r, t)) {
      subtract(r, t);
      root.insert(root.begin(), 1);
    } else {
      root.insert(root.begin(), 0);
    }
    r = trimmed(r);
  }
  return trimmed(root);
}

}  // namespace normlab::chomsky
