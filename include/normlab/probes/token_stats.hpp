// Collapse statistics of one sequence's token matrix X (T, D), row t = token t's vector.
//
// Mean pairwise cosine similarity (self pairs excluded), in O(T·D):
//   x̂_t = x_t / ‖x_t‖,   s = Σ_t x̂_t,   mean_{t≠u} cos(x_t, x_u) = (‖s‖² − T) / (T (T − 1))
// since ‖s‖² = Σ_t Σ_u ⟨x̂_t, x̂_u⟩ = T + Σ_{t≠u} cos. Rows with ‖x_t‖ = 0 are left out
// (T counts the others); fewer than two rows give NaN.
//
// Effective rank (Roy & Vetterli 2007) of X, uncentered, so that T identical tokens have
// rank 1:
//   σ_k the singular values,  p_k = σ_k / Σ σ,  erank = exp(−Σ_k p_k ln p_k)   (1 ≤ erank ≤ rank)
// The σ_k come from LAPACK dgesdd on X in double (singular values only; OpenBLAS ships
// LAPACK), not from a Gram matrix, whose rounding would turn into σ ~ 1e-8·σ_max noise and
// add ~1e-5 to the rank of a collapsed matrix. A zero matrix gives NaN.
#pragma once

#include <cstdint>
#include <vector>

namespace normlab {

double mean_pairwise_cosine(const float* x, int64_t T, int D);

// Singular values of X (T, D), descending, min(T, D) of them.
std::vector<double> singular_values(const float* x, int64_t T, int D);

double effective_rank(const float* x, int64_t T, int D);
// From singular values (any order; zeros allowed).
double effective_rank_of(const std::vector<double>& sigma);

}  // namespace normlab
