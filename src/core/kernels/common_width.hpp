// Loops over a row of D values compiled for a known D where D is a common width.
#pragma once

#include <type_traits>

namespace normlab {

// f(std::integral_constant<int, D>) when D is one of the widths the studies use (32, 64, 128),
// f(std::integral_constant<int, 0>) otherwise: lets a kernel's loops over D be compiled for a
// known length. The arithmetic is the same either way, so the results are too.
template <typename F>
inline void with_common_width(int D, F&& f) {
  switch (D) {
    case 32:
      return f(std::integral_constant<int, 32>{});
    case 64:
      return f(std::integral_constant<int, 64>{});
    case 128:
      return f(std::integral_constant<int, 128>{});
    default:
      return f(std::integral_constant<int, 0>{});
  }
}

}  // namespace normlab
