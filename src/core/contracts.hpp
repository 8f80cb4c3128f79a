// Checks of the kernels' documented contracts: sizes, and outputs that may not alias inputs.
// Each is O(1) per call and always on (a kernel call costs far more), so a violation is a
// std::logic_error naming the kernel and the rule, in every build, instead of silently wrong
// numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace normlab {

// Whether the byte ranges [a, a + a_count) and [b, b + b_count) of T share an element.
template <typename T>
bool ranges_overlap(const T* a, int64_t a_count, const T* b, int64_t b_count) {
  if (a == nullptr || b == nullptr || a_count <= 0 || b_count <= 0) return false;
  const std::less<const T*> before;
  return before(a, b + b_count) && before(b, a + a_count);
}

inline void require_contract(bool ok, const char* kernel, const char* rule) {
  if (!ok) throw std::logic_error(std::string(kernel) + ": contract violated: " + rule);
}

}  // namespace normlab
