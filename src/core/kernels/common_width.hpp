// Loops over a row of D values compiled for a known D where D is a common width.
#pragma once

#include <type_traits>

namespace normlab {

// f(std::integral_constant<int, D>) when D is one of Widths, f(std::integral_constant<int, 0>)
// otherwise: lets a kernel's loops over D be compiled for a known length (unrolled, with the
// masks of a partial last block known). The arithmetic is the same either way, so the results
// are too. Each kernel lists the widths worth a copy of its body.
template <int... Widths, typename F>
inline void with_width_among(int D, F&& f) {
  const bool known =
      ((D == Widths ? (f(std::integral_constant<int, Widths>{}), true) : false) || ...);
  if (!known) f(std::integral_constant<int, 0>{});
}

// The width a kernel body runs with: the known constant W, or the run-time width when W = 0.
template <int W>
constexpr int width_or(std::integral_constant<int, W>, int runtime) {
  return W > 0 ? W : runtime;
}

// The widths of the studies' deeper models (docs/attnres.md): 32, 64 and 128.
template <typename F>
inline void with_common_width(int D, F&& f) {
  with_width_among<32, 64, 128>(D, f);
}

// Those and the narrow models' (15: the post-norm paper's minimal model and quick.toml; 31: its
// maximum retrieval model), for kernels whose cost per row matters there (the norms).
template <typename F>
inline void with_study_width(int D, F&& f) {
  with_width_among<15, 31, 32, 64, 128>(D, f);
}

// The head widths of the studies' models (15 and 31: one head of the post-norm paper's minimal
// and maximum retrieval models; 16: two heads of 32 and four of 64; 32, 64), for the attention
// kernels.
template <typename F>
inline void with_head_width(int dh, F&& f) {
  with_width_among<15, 16, 31, 32, 64>(dh, f);
}

}  // namespace normlab
