#include "core/kernels/gemm.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>

#include "core/contracts.hpp"
#include "core/kernels/gemm_tile.hpp"
#include "core/kernels/small_linear.hpp"
#include "core/parallel.hpp"
#include "core/scratch.hpp"
#include "normlab/core/machine.hpp"

namespace normlab {

// OpenBLAS always runs single-threaded: its own threading (by default one thread per core, or
// OPENBLAS_NUM_THREADS) blocks a product differently and changes the bits of the result.
// Done once, before the first call, whoever calls it.
void ensure_blas_single_threaded() {
  static const bool done = [] {
    note_slow_openblas_once();
    openblas_set_num_threads(1);
    return true;
  }();
  (void)done;
}

namespace {

// Cache blocking, in the order of Goto's algorithm: a block of kColBlock columns of op(B) and
// kDepth values of k is packed once (L2), then blocks of kRowBlock rows of op(A) (L2), and each
// tile column's panel of B (kDepth × kCols, L1) meets every tile row of A. op(A) is read where
// it lies (its rows, or its columns when transposed, are the tile's), but for a last, partial
// tile row, packed with zero rows below it. Products split in row shards (gemm_sharded, the dx of
// linear_backward) pack op(B) whole once and share it. The blocks change where values wait
// between chains, never the chains (gemm_tile.hpp): speed only.
constexpr int64_t kDepth = 256;
constexpr int64_t kColBlock = 2048;
template <typename T>
constexpr int64_t kRowBlock = 16 * GemmTile<T>::kRows;

// Rows [i0, i0 + rows) and k in [k0, k0 + kc) of op(A) into panels of kRows rows, zero past
// the last row: panel p holds a[(p·kc + k)·kRows + r] = op(A)(i0 + p·kRows + r, k0 + k), where
// op(A)(i, k) is A[i·lda + k], or A[k·lda + i] transposed. Each loop reads along memory.
template <typename T>
void pack_a(bool trans, const T* A, int64_t lda, int64_t i0, int64_t rows, int64_t k0, int64_t kc,
            T* a) {
  constexpr int64_t MR = GemmTile<T>::kRows;
  for (int64_t p = 0; p * MR < rows; ++p, a += kc * MR) {
    const int64_t i = i0 + p * MR, valid = std::min(MR, rows - p * MR);
    if (!trans) {
      for (int64_t r = 0; r < valid; ++r) {
        const T* row = A + (i + r) * lda + k0;
        for (int64_t k = 0; k < kc; ++k) a[k * MR + r] = row[k];
      }
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        const T* col = A + (k0 + k) * lda + i;
        for (int64_t r = 0; r < valid; ++r) a[k * MR + r] = col[r];
      }
    }
    for (int64_t r = valid; r < MR; ++r) {
      for (int64_t k = 0; k < kc; ++k) a[k * MR + r] = T(0);
    }
  }
}

// k in [k0, k0 + kc) and columns [j0, j0 + cols) of op(B) into panels of kCols columns, zero
// past the last column: panel p holds b[(p·kc + k)·kCols + c] = op(B)(k0 + k, j0 + p·kCols + c),
// where op(B)(k, j) is B[k·ldb + j], or B[j·ldb + k] transposed.
template <typename T>
void pack_b(bool trans, const T* B, int64_t ldb, int64_t k0, int64_t kc, int64_t j0, int64_t cols,
            T* b) {
  constexpr int64_t NR = GemmTile<T>::kCols;
  for (int64_t p = 0; p * NR < cols; ++p, b += kc * NR) {
    const int64_t j = j0 + p * NR, valid = std::min(NR, cols - p * NR);
    if (!trans) {
      for (int64_t k = 0; k < kc; ++k) {
        const T* row = B + (k0 + k) * ldb + j;
        for (int64_t c = 0; c < valid; ++c) b[k * NR + c] = row[c];
        for (int64_t c = valid; c < NR; ++c) b[k * NR + c] = T(0);
      }
    } else {
      for (int64_t c = 0; c < valid; ++c) {
        const T* col = B + (j + c) * ldb + k0;
        for (int64_t k = 0; k < kc; ++k) b[k * NR + c] = col[k];
      }
      for (int64_t c = valid; c < NR; ++c) {
        for (int64_t k = 0; k < kc; ++k) b[k * NR + c] = T(0);
      }
    }
  }
}

// One tile of C at c (rows × cols of it real), op(A)'s values read as GemmTile::multiply
// reads them (a, k_step, r_step): in place when whole, else through a full tile in registers'
// layout whose extra rows and columns are discarded.
template <typename T>
void multiply_tile(int64_t kc, const T* a, int64_t k_step, int64_t r_step, const T* b, T* c,
                   int64_t ldc, int64_t rows, int64_t cols, bool from_zero) {
  using Tile = GemmTile<T>;
  if (rows == Tile::kRows && cols == Tile::kCols) {
    return Tile::multiply(kc, a, k_step, r_step, b, c, ldc, from_zero);
  }
  T tile[Tile::kRows * Tile::kCols] = {};
  for (int64_t r = 0; r < rows && !from_zero; ++r) {
    std::copy(c + r * ldc, c + r * ldc + cols, tile + r * Tile::kCols);
  }
  Tile::multiply(kc, a, k_step, r_step, b, tile, Tile::kCols, from_zero);
  for (int64_t r = 0; r < rows; ++r) {
    std::copy(tile + r * Tile::kCols, tile + r * Tile::kCols + cols, c + r * ldc);
  }
}

}  // namespace

// op(B) packed whole, for products that share it (the row shards of gemm_sharded, the dx of
// linear_backward): pack_b's panel of each column block j0 and depth block k0 lies at
// b + j0·K + k0·round_up(cols, kCols), K·round_up(N, kCols) values in all. Outside the
// anonymous namespace because the exported products' lambdas capture it.
template <typename T>
struct PackedB {
  T* b;
  int64_t K;
  T* panel(int64_t j0, int64_t cols, int64_t k0) const {
    constexpr int64_t NR = GemmTile<T>::kCols;
    return b + j0 * K + k0 * ((cols + NR - 1) / NR * NR);
  }
};

namespace {

// Packs op(B) (K, N) whole into the calling thread's gemm_b_whole scratch, its panels in
// parallel.
template <typename T>
PackedB<T> pack_b_whole(bool trans_b, const T* B, int64_t ldb, int64_t K, int64_t N,
                        ScratchUse use = ScratchUse::gemm_b_whole) {
  constexpr int64_t NR = GemmTile<T>::kCols;
  T* b = scratch<T>(use, K * ((N + NR - 1) / NR * NR));
  const PackedB<T> packed{b, K};
  const int64_t col_blocks = (N + kColBlock - 1) / kColBlock, depths = (K + kDepth - 1) / kDepth;
  parallel_for(col_blocks * depths, [&](int64_t panel) {
    const int64_t j0 = panel / depths * kColBlock, k0 = panel % depths * kDepth;
    const int64_t cols = std::min(kColBlock, N - j0);
    pack_b(trans_b, B, ldb, k0, std::min(kDepth, K - k0), j0, cols, packed.panel(j0, cols, k0));
  });
  return packed;
}

// C (M, N) = or += op(A) (M, K) op(B) (K, N), op(B)'s panel of column block j0 (cols columns)
// and depth block k0 (kc values) given by b_panel(j0, cols, k0, kc).
template <typename T, typename PanelOfB>
void gemm_on_panels(bool trans_a, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda,
                    PanelOfB&& b_panel, bool accumulate, T* C, int64_t ldc) {
  using Tile = GemmTile<T>;
  constexpr int64_t MR = Tile::kRows, NR = Tile::kCols, MC = kRowBlock<T>;
  T* a = scratch<T>(ScratchUse::gemm_a_panels, MR * std::min(K, kDepth));
  // op(A)(i, k) lies at A[i·lda + k], or at A[k·lda + i] transposed: GemmTile::multiply's
  // (k_step, r_step) for op(A) read in place.
  const int64_t k_step = trans_a ? lda : 1, r_step = trans_a ? 1 : lda;
  for (int64_t j0 = 0; j0 < N; j0 += kColBlock) {
    const int64_t cols = std::min(kColBlock, N - j0);
    for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
      const int64_t kc = std::min(kDepth, K - k0);
      const bool from_zero = !accumulate && k0 == 0;
      const T* b = b_panel(j0, cols, k0, kc);
      for (int64_t i0 = 0; i0 < M; i0 += MC) {
        const int64_t rows = std::min(MC, M - i0);
        // Whole tile rows read op(A) where it lies; a last, partial one is packed with zero
        // rows below it.
        const int64_t whole = rows / MR * MR;
        if (whole < rows) pack_a(trans_a, A, lda, i0 + whole, rows - whole, k0, kc, a);
        for (int64_t jr = 0; jr < cols; jr += NR) {
          T* c = C + i0 * ldc + j0 + jr;
          const int64_t tile_cols = std::min(NR, cols - jr);
          for (int64_t ir = 0; ir < whole; ir += MR) {
            const T* at = A + (i0 + ir) * r_step + k0 * k_step;
            multiply_tile(kc, at, k_step, r_step, b + jr * kc, c + ir * ldc, ldc, MR, tile_cols,
                          from_zero);
          }
          if (whole < rows) {
            multiply_tile(kc, a, MR, int64_t(1), b + jr * kc, c + whole * ldc, ldc, rows - whole,
                          tile_cols, from_zero);
          }
        }
      }
    }
  }
}

// C's rows when K is zero: +0, or left as they are when accumulating. True if there is
// nothing more to do.
template <typename T>
bool empty_product(int64_t M, int64_t N, int64_t K, bool accumulate, T* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return true;
  if (K > 0) return false;
  for (int64_t i = 0; i < M && !accumulate; ++i) std::fill(C + i * ldc, C + i * ldc + N, T(0));
  return true;
}

// gemm on op(B) packed whole (pack_b_whole).
template <typename T>
void gemm_packed_b(bool trans_a, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda,
                   const PackedB<T>& packed, bool accumulate, T* C, int64_t ldc) {
  if constexpr (Lanes<T>::kWidth == 1) note_scalar_products_once();
  if (empty_product(M, N, K, accumulate, C, ldc)) return;
  gemm_on_panels<T>(
      trans_a, M, N, K, A, lda,
      [&](int64_t j0, int64_t cols, int64_t k0, int64_t) {
        return static_cast<const T*>(packed.panel(j0, cols, k0));
      },
      accumulate, C, ldc);
}

}  // namespace

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda,
          const T* B, int64_t ldb, bool accumulate, T* C, int64_t ldc) {
  constexpr int64_t NR = GemmTile<T>::kCols;
  if constexpr (Lanes<T>::kWidth == 1) note_scalar_products_once();
  if (empty_product(M, N, K, accumulate, C, ldc)) return;
  // One block of op(B) packed at a time, where the tiles meet it (L2).
  T* b = scratch<T>(ScratchUse::gemm_b_panels,
                    (std::min(N, kColBlock) + NR - 1) / NR * NR * std::min(K, kDepth));
  gemm_on_panels<T>(
      trans_a, M, N, K, A, lda,
      [&](int64_t j0, int64_t cols, int64_t k0, int64_t kc) {
        pack_b(trans_b, B, ldb, k0, kc, j0, cols, b);
        return static_cast<const T*>(b);
      },
      accumulate, C, ldc);
}

std::string gemm_kernel_description() {
  return fmt::format("{}, float tile {}x{}, double tile {}x{}", kGemmTileIsa,
                     GemmTile<float>::kRows, GemmTile<float>::kCols, GemmTile<double>::kRows,
                     GemmTile<double>::kCols);
}

template <typename T>
void gemm_sharded(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const T* A,
                  int64_t lda, const T* B, int64_t ldb, bool accumulate, T* C, int64_t ldc) {
  // op(B) packed once for every shard when there are several; one shard packs as gemm does.
  const bool shared = shard_count(M) > 1 && N > 0 && K > 0;
  const PackedB<T> packed = shared ? pack_b_whole(trans_b, B, ldb, K, N) : PackedB<T>{nullptr, K};
  for_row_shards(M, [&](int64_t, int64_t m0, int64_t m1) {
    // Row m of op(A) starts at A + m*lda (no transpose) or at column m of A (transpose).
    const T* a = trans_a ? A + m0 : A + m0 * lda;
    if (shared) {
      gemm_packed_b<T>(trans_a, m1 - m0, N, K, a, lda, packed, accumulate, C + m0 * ldc, ldc);
    } else {
      gemm<T>(trans_a, trans_b, m1 - m0, N, K, a, lda, B, ldb, accumulate, C + m0 * ldc, ldc);
    }
  });
}

template <typename T>
void linear_forward(const T* x, const T* weight, T* y, const LinearShape& shape) {
  const int64_t R = shape.rows, C = shape.in, OC = shape.out;
  const int64_t ldx = shape.ldx(), ldy = shape.ldy();
  require_contract(R >= 0 && C >= 1 && OC >= 1 && ldx >= C && ldy >= OC, "linear_forward",
                   "rows >= 0, in >= 1, out >= 1, x_stride >= in, y_stride >= out");
  const int64_t y_count = R > 0 ? (R - 1) * ldy + OC : 0;
  require_contract(!ranges_overlap<T>(y, y_count, x, R > 0 ? (R - 1) * ldx + C : 0) &&
                       !ranges_overlap<T>(y, y_count, weight, OC * C),
                   "linear_forward", "y may not alias x or weight");
  if (is_small_linear(C, OC)) return small_linear_forward(x, weight, y, shape);
  gemm_sharded<T>(false, true, R, OC, C, x, ldx, weight, C, false, y, ldy);
}

// The weight gradient of linear_backward is summed over its rows in kWeightLanes lanes, each a
// contiguous run of whole row shards (lane l: shards [l·S/lanes, (l+1)·S/lanes) of S), so that
// that many products can run side by side; lane 0 accumulates into dweight itself, each other
// lane into a partial sum of its own (OC, C), added to dweight at the end. Fewer lanes when
// their partials would pass kWeightPartialBytes. Both depend on the shape only, never on the
// thread count. Two lanes keep both cores of a 2-core machine busy; every further lane costs
// one-thread runs a partial sum written and re-read.
constexpr int64_t kWeightLanes = 2;
constexpr int64_t kWeightPartialBytes = int64_t(32) << 20;

namespace {

// The number of lanes of a weight gradient (OC, C) over R rows (above).
template <typename T>
int64_t weight_lanes(int64_t R, int64_t C, int64_t OC) {
  const int64_t affordable = kWeightPartialBytes / (OC * C * int64_t(sizeof(T))) + 1;
  return std::clamp<int64_t>(affordable, 1, std::min(shard_count(R), kWeightLanes));
}

// dweight += lane 1 + lane 2 + ... in lane order, elementwise in fixed blocks.
template <typename T>
void add_weight_lanes(T* dweight, const T* partial, int64_t lanes, int64_t size) {
  constexpr int64_t kBlock = 4096;
  parallel_for(shard_count(size, kBlock), [&](int64_t b) {
    const int64_t e1 = std::min(size, (b + 1) * kBlock);
    for (int64_t l = 1; l < lanes; ++l) {
      const T* p = partial + (l - 1) * size;
      for (int64_t e = b * kBlock; e < e1; ++e) dweight[e] += p[e];
    }
  });
}

// bias_backward's partial sum of one row shard: part (OC) += Σ_n dy_n in row order.
template <typename T>
void add_bias_rows(const T* dy, int64_t ldy, int64_t rows, int64_t OC, T* part) {
  for (int64_t n = 0; n < rows; ++n) {
    const T* row = dy + n * ldy;
    for (int64_t o = 0; o < OC; ++o) part[o] += row[o];
  }
}

}  // namespace

template <typename T>
void linear_backward(const T* x, const T* weight, const T* dy, T* dx, T* dweight,
                     const LinearShape& shape, DxInto dx_into) {
  const int64_t R = shape.rows, C = shape.in, OC = shape.out;
  const int64_t ldx = shape.ldx(), ldy = shape.ldy();
  if (is_small_linear(C, OC)) {
    // The small kernels add a finished sum to dx (v + 0 is +0 where v is −0): dx is zeroed
    // first, so that assign gives add's bits.
    if (dx != nullptr && dx_into == DxInto::assign) {
      for_row_shards(R, [&](int64_t, int64_t n0, int64_t n1) {
        for (int64_t n = n0; n < n1; ++n) std::fill_n(dx + n * ldx, C, T(0));
      });
    }
    return small_linear_backward(x, weight, dy, dx, dweight, shape);
  }
  const int64_t shards = shard_count(R);
  // dx (R, C) += dy (R, OC) weight (OC, C), row shard by row shard, the weight packed once.
  const PackedB<T> packed_weight =
      dx != nullptr && R > 0 ? pack_b_whole(false, weight, C, OC, C) : PackedB<T>{nullptr, OC};
  const auto dx_rows = [&](int64_t n0, int64_t n1) {
    if (dx == nullptr) return;
    gemm_packed_b<T>(false, n1 - n0, C, OC, dy + n0 * ldy, ldy, packed_weight,
                     dx_into == DxInto::add, dx + n0 * ldx, ldx);
  };
  // dweight (OC, C) += Σ_l dy_l^T (OC, R_l) x_l (R_l, C), l over the lanes' rows (above).
  // Each product packs only its lane's rows, so no operand is packed twice. (Sharding the
  // output rows of dweight instead leaves one task for OC ≤ 256 and repacks x for every task.)
  const int64_t size = OC * C;
  const int64_t lanes = weight_lanes<T>(R, C, OC);
  T* partial =
      scratch<T>(ScratchUse::linear_weight_partial, (lanes - 1) * size);  // (lanes-1, OC, C)
  parallel_for(lanes, [&](int64_t lane) {
    const int64_t s0 = lane * shards / lanes, s1 = (lane + 1) * shards / lanes;
    const int64_t n0 = s0 * kRowShard, n1 = std::min(R, s1 * kRowShard);
    for (int64_t s = s0; s < s1; ++s) dx_rows(s * kRowShard, std::min(R, (s + 1) * kRowShard));
    gemm<T>(true, false, OC, C, n1 - n0, dy + n0 * ldy, ldy, x + n0 * ldx, ldx, lane == 0,
            lane == 0 ? dweight : partial + (lane - 1) * size, C);
  });
  if (lanes > 1) add_weight_lanes(dweight, partial, lanes, size);
}

template <typename T>
void bias_forward(T* y, const T* bias, const LinearShape& shape) {
  const int64_t OC = shape.out, ldy = shape.ldy();
  for_row_shards(shape.rows, [&](int64_t, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      T* row = y + n * ldy;
      for (int64_t o = 0; o < OC; ++o) row[o] += bias[o];
    }
  });
}

template <typename T>
void bias_backward(const T* dy, T* dbias, const LinearShape& shape) {
  const int64_t OC = shape.out, ldy = shape.ldy();
  const int64_t shards = shard_count(shape.rows);
  T* partial = zeroed_scratch<T>(ScratchUse::bias_partial, shards * OC);  // (shards, OC)
  for_row_shards(shape.rows, [&](int64_t s, int64_t n0, int64_t n1) {
    add_bias_rows(dy + n0 * ldy, ldy, n1 - n0, OC, partial + s * OC);
  });
  for (int64_t s = 0; s < shards; ++s) {
    const T* part = partial + s * OC;
    for (int64_t o = 0; o < OC; ++o) dbias[o] += part[o];
  }
}

template <typename T>
void linear_by_shards(const T* x, const T* weight, const T* bias, T* dx, T* dweight, T* dbias,
                      const LinearShape& shape, DxInto dx_into, const ShardGradient<T>& gradient) {
  const int64_t R = shape.rows, C = shape.in, OC = shape.out, ldx = shape.ldx();
  require_contract(shape.y_stride == 0 || shape.y_stride == OC, "linear_by_shards",
                   "y is dense: y_stride 0 or out");
  const int64_t shards = shard_count(R);
  if (R == 0) return;
  if (is_small_linear(C, OC)) {  // the small kernels' bits: y whole, then the layer's backward
    T* y = scratch<T>(ScratchUse::linear_shard_blocks, R * OC);
    linear_forward(x, weight, y, shape);
    if (bias != nullptr) bias_forward(y, bias, shape);
    for_row_shards(R, [&](int64_t s, int64_t n0, int64_t n1) { gradient(s, n0, n1, y + n0 * OC); });
    if (dbias != nullptr) bias_backward(y, dbias, shape);
    linear_backward(x, weight, y, dx, dweight, shape, dx_into);
    return;
  }
  // A round takes the next `per_lane` shards of each lane, one job each, side by side. A job
  // goes through its shard kSubRows rows at a time, while they are in cache: y, dy, the bias
  // partial and dx, and, when it is its lane's only job of the round, the weight gradient.
  // Otherwise the lanes' weight gradients follow the jobs, each over its shards of the round,
  // which lie in consecutive blocks. Either way each lane's chains go on from row to row in
  // row order: linear_backward's one product per lane.
  constexpr int64_t kSubRows = 64;
  const int64_t lanes = weight_lanes<T>(R, C, OC), size = OC * C;
  const int64_t per_lane = std::max<int64_t>(1, num_threads() / lanes);
  const PackedB<T> forward_b =
      pack_b_whole(true, weight, C, C, OC, ScratchUse::gemm_b_whole_transposed);  // weight^T
  const PackedB<T> dx_b =
      dx != nullptr ? pack_b_whole(false, weight, C, OC, C) : PackedB<T>{nullptr, OC};
  T* blocks = scratch<T>(ScratchUse::linear_shard_blocks, lanes * per_lane * kRowShard * OC);
  T* partial = scratch<T>(ScratchUse::linear_weight_partial, (lanes - 1) * size);
  T* bias_part = dbias != nullptr ? zeroed_scratch<T>(ScratchUse::bias_partial, shards * OC)
                                  : nullptr;  // (shards, OC)
  const auto first_shard = [&](int64_t lane) { return lane * shards / lanes; };
  // The lane's weight gradient += dy^T x over rows [n0, n1), dy (n1 − n0, OC).
  const auto add_weight_rows = [&](int64_t lane, int64_t n0, int64_t n1, const T* dy) {
    const bool accumulate = lane == 0 || n0 > first_shard(lane) * kRowShard;
    gemm<T>(true, false, OC, C, n1 - n0, dy, OC, x + n0 * ldx, ldx, accumulate,
            lane == 0 ? dweight : partial + (lane - 1) * size, C);
  };
  const int64_t longest = (shards + lanes - 1) / lanes;
  for (int64_t round = 0; round * per_lane < longest; ++round) {
    parallel_for(lanes * per_lane, [&](int64_t job) {
      const int64_t lane = job / per_lane,
                    s = first_shard(lane) + round * per_lane + job % per_lane;
      if (s >= first_shard(lane + 1)) return;
      const int64_t n1 = std::min(R, (s + 1) * kRowShard);
      T* block = blocks + job * kRowShard * OC;  // (kRowShard, OC)
      for (int64_t m0 = s * kRowShard; m0 < n1; m0 += kSubRows) {
        const int64_t m1 = std::min(n1, m0 + kSubRows), rows = m1 - m0;
        T* y = block + (m0 - s * kRowShard) * OC;  // (rows, OC)
        gemm_packed_b<T>(false, rows, OC, C, x + m0 * ldx, ldx, forward_b, false, y, OC);
        if (bias != nullptr) {
          for (int64_t n = 0; n < rows; ++n) {
            for (int64_t o = 0; o < OC; ++o) y[n * OC + o] += bias[o];
          }
        }
        gradient(s, m0, m1, y);  // y is dy from here
        if (bias_part != nullptr) add_bias_rows(y, OC, rows, OC, bias_part + s * OC);
        if (dx != nullptr) {
          gemm_packed_b<T>(false, rows, C, OC, y, OC, dx_b, dx_into == DxInto::add, dx + m0 * ldx,
                           ldx);
        }
        if (per_lane == 1) add_weight_rows(lane, m0, m1, y);
      }
    });
    if (per_lane == 1) continue;
    parallel_for(lanes, [&](int64_t lane) {
      const int64_t s0 = first_shard(lane) + round * per_lane;
      const int64_t s1 = std::min(first_shard(lane + 1), s0 + per_lane);
      if (s0 >= s1) return;
      add_weight_rows(lane, s0 * kRowShard, std::min(R, s1 * kRowShard),
                      blocks + lane * per_lane * kRowShard * OC);
    });
  }
  if (lanes > 1) add_weight_lanes(dweight, partial, lanes, size);
  if (bias_part != nullptr) {
    for (int64_t s = 0; s < shards; ++s) {
      for (int64_t o = 0; o < OC; ++o) dbias[o] += bias_part[s * OC + o];
    }
  }
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t,
                          const float*, int64_t, bool, float*, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t,
                           const double*, int64_t, bool, double*, int64_t);
template void gemm_sharded<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t,
                                  const float*, int64_t, bool, float*, int64_t);
template void gemm_sharded<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t,
                                   const double*, int64_t, bool, double*, int64_t);
template void linear_forward<float>(const float*, const float*, float*, const LinearShape&);
template void linear_forward<double>(const double*, const double*, double*, const LinearShape&);
template void linear_backward<float>(const float*, const float*, const float*, float*, float*,
                                     const LinearShape&, DxInto);
template void linear_backward<double>(const double*, const double*, const double*, double*, double*,
                                      const LinearShape&, DxInto);
template void linear_by_shards<float>(const float*, const float*, const float*, float*, float*,
                                      float*, const LinearShape&, DxInto,
                                      const ShardGradient<float>&);
template void linear_by_shards<double>(const double*, const double*, const double*, double*,
                                       double*, double*, const LinearShape&, DxInto,
                                       const ShardGradient<double>&);
template void bias_forward<float>(float*, const float*, const LinearShape&);
template void bias_forward<double>(double*, const double*, const LinearShape&);
template void bias_backward<float>(const float*, float*, const LinearShape&);
template void bias_backward<double>(const double*, double*, const LinearShape&);

}  // namespace normlab
