#include "core/kernels/small_linear.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/contracts.hpp"
#include "core/kernels/block16.hpp"
#include "core/parallel.hpp"
#include "core/scratch.hpp"

namespace normlab {
namespace {

// Eight rows side by side keep both FMA units busy (latency 4, two per cycle); four leave half
// the issue slots empty.
constexpr int kLinearRows = 8;

// Writes or adds one block of a product row to out[k0, k0 + 16) ∩ [0, n): the blocks of a
// zero-padded operand run past the n real columns, and out may have neighbours there.
template <typename T>
struct StoreRows {
  T* out;
  int64_t ldo, n;
  bool add;
  void operator()(int r, int64_t k0, const Block16<T>& v) const {
    T* o = out + r * ldo + k0;
    const int64_t valid = n - k0;
    const Block16<T> sum = add ? v + load_first(o, valid) : v;
    store_first(o, valid, sum);
  }
};

// out (M, n_out) op= x (M, ·) m for rows [0, M): x's row r is read at x + r·ldx, column c at
// +c; m (n_in, ld) zero-padded to ld = pad16(n_out). Row shards of kRowShard run in parallel.
// The group's rows of x are first copied column by column into xp (n_in, R): read in place,
// each of the R rows needed its own offset r·ldx, more than the free registers, and GCC
// reloaded them from the stack before every multiply-add (the layer ran at ~55% of the kernel's
// rate; docs/performance-log.md, "Bit-identical fixes found by profiling the studies"). The
// products and their order are the same.
constexpr int64_t kMaxSmallIn = 64;  // n_in: C ≤ 32 forward, OC ≤ 64 for dx (is_small_linear)

template <typename T>
void rows_times_padded(const T* x, int64_t ldx, int64_t M, int64_t n_in, const T* m, int64_t ld,
                       int64_t n_out, T* out, int64_t ldo, bool add) {
  require_contract(n_in <= kMaxSmallIn, "small_linear", "at most 64 summed features");
  for_row_shards(M, [&](int64_t, int64_t m0, int64_t m1) {
    in_row_groups<kLinearRows>(m0, m1, [&](auto rows, int64_t r) {
      constexpr int R = rows();
      T xp[kMaxSmallIn * R];
      for (int64_t c = 0; c < n_in; ++c) {
        for (int i = 0; i < R; ++i) xp[c * R + i] = x[(r + i) * ldx + c];
      }
      const StoreRows<T> store{out + r * ldo, ldo, n_out, add};
      // Two or three blocks per row (n_out in (16, 48]) in one pass, in float (double's
      // blocks take twice the registers): the same bits as block by block.
      if constexpr (std::is_same_v<T, float> && R == kLinearRows) {
        if (ld == 2 * kBlock) return rows_times_blocks<R, 2>(xp, 1, R, 0, n_in, m, ld, store);
        if (ld == 3 * kBlock) return rows_times_blocks<R, 3>(xp, 1, R, 0, n_in, m, ld, store);
      }
      rows_times_mat_each<R>(xp, 1, R, 0, n_in, m, ld, ld, store);
    });
  });
}

}  // namespace

// In the kernels below M = R rows, K = C inputs, N = OC outputs, X = x, W = weight, Y = y.
template <typename T>
void small_linear_forward(const T* X, const T* W, T* Y, const LinearShape& shape) {
  const int64_t M = shape.rows, K = shape.in, N = shape.out;
  const int64_t ldx = shape.ldx(), ldy = shape.ldy();
  // Wt (K, Np) = W^T zero-padded: y_m = Σ_k x_mk Wt[k].
  const int64_t Np = pad16(N);
  T* wt = zeroed_scratch<T>(ScratchUse::small_linear_weight, K * Np);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; ++k) wt[k * Np + n] = W[n * K + k];
  }
  rows_times_padded(X, ldx, M, K, wt, Np, N, Y, ldy, /*add=*/false);
}

template <typename T>
void small_linear_backward(const T* X, const T* W, const T* dY, T* dX, T* dW,
                           const LinearShape& shape) {
  const int64_t M = shape.rows, K = shape.in, N = shape.out;
  const int64_t ldx = shape.ldx(), ldy = shape.ldy();
  const int64_t Kp = pad16(K);
  if (dX != nullptr) {
    // dx_m += Σ_n dy_mn W[n], W (N, K) zero-padded to (N, Kp).
    T* wp = zeroed_scratch<T>(ScratchUse::small_linear_weight, N * Kp);
    for (int64_t n = 0; n < N; ++n) std::copy(W + n * K, W + n * K + K, wp + n * Kp);
    rows_times_padded(dY, ldy, M, N, wp, Kp, K, dX, ldx, /*add=*/true);
  }
  // dW[n] += Σ_m dy_mn x_m: the rows of dW in groups, each a sum over all M rows in ascending
  // order; X copied zero-padded to (M, Kp) so it can be read in whole blocks.
  // One fill of the whole buffer, then the rows (filling each row's few padding columns instead
  // called memset once per row; docs/performance-log.md, "Bisection").
  T* xp = zeroed_scratch<T>(ScratchUse::small_linear_input, M * Kp);
  for (int64_t m = 0; m < M; ++m) std::copy(X + m * ldx, X + m * ldx + K, xp + m * Kp);
  in_row_groups<kLinearRows>(0, N, [&](auto rows, int64_t n) {
    rows_times_mat_each<rows()>(dY + n, 1, ldy, 0, M, xp, Kp, Kp,
                                StoreRows<T>{dW + n * K, K, K, /*add=*/true});
  });
}

template void small_linear_forward<float>(const float*, const float*, float*, const LinearShape&);
template void small_linear_forward<double>(const double*, const double*, double*,
                                           const LinearShape&);
template void small_linear_backward<float>(const float*, const float*, const float*, float*, float*,
                                           const LinearShape&);
template void small_linear_backward<double>(const double*, const double*, const double*, double*,
                                            double*, const LinearShape&);

}  // namespace normlab
