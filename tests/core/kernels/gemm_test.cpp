// linear_forward / linear_backward (gemm.hpp) in double precision:
//   - the forward against a direct triple loop, with padded leading dimensions (ldx > K,
//     ldy > N) whose padding must stay untouched;
//   - dX and dW against central differences of L = Σ w ⊙ Y, and the "+=" contract (both
//     gradients add to what the buffers held);
//   - shapes with M > kRowShard (dX split into row shards) and N > kRowShard (dW split);
//   - both implementations: the small kernels (K ≤ 32 and N ≤ 64, small_linear.hpp) with rows
//     not a multiple of their groups of four and widths not a multiple of 16, and the register
//     tiles (gemm_tile.hpp) just beyond their limits;
// and gemm in float and double, bit for bit against one std::fma chain per output (the
// contract that makes its results the same on every CPU), also gemm_sharded and
// linear_backward's dx, whose row shards share op(B) packed once, added or assigned (DxInto);
// and a linear layer's bias, its backward's sum over rows in its fixed order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/kernels/gemm.hpp"
#include "core/parallel.hpp"
#include "support/gradcheck.hpp"
#include "support/kernel_case.hpp"

namespace normlab {
namespace {

using testing::added;
using testing::check_gradients;
using testing::random_normal;
using testing::strided_rows;

struct LinearCase {
  int64_t M, K, N;
  int64_t pad_x, pad_y;  // extra columns in X (ldx = K + pad_x) and Y (ldy = N + pad_y)
};

std::string name_of(const LinearCase& c) {
  return "M" + std::to_string(c.M) + "_K" + std::to_string(c.K) + "_N" + std::to_string(c.N) +
         "_padx" + std::to_string(c.pad_x) + "_pady" + std::to_string(c.pad_y);
}

std::string linear_case_name(const ::testing::TestParamInfo<LinearCase>& info) {
  return name_of(info.param);
}

class Linear : public ::testing::TestWithParam<LinearCase> {};

TEST_P(Linear, ForwardMatchesTripleLoopAndKeepsPadding) {
  const auto [M, K, N, pad_x, pad_y] = GetParam();
  const int64_t ldx = K + pad_x, ldy = N + pad_y;
  const LinearShape shape{.rows = M, .in = K, .out = N, .x_stride = ldx, .y_stride = ldy};
  Rng rng(1);
  const std::vector<double> X = random_normal(rng, M * ldx);
  const std::vector<double> W = random_normal(rng, N * K);
  std::vector<double> Y(M * ldy, 123.0);  // sentinel in the padding
  linear_forward(X.data(), W.data(), Y.data(), shape);
  double worst = 0;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k) ref += X[m * ldx + k] * W[n * K + k];
      worst = std::max(worst, std::abs(Y[m * ldy + n] - ref));
    }
    for (int64_t n = N; n < ldy; ++n) ASSERT_EQ(Y[m * ldy + n], 123.0) << "padding written";
  }
  EXPECT_LT(worst, 1e-12);
}

TEST_P(Linear, BackwardMatchesCentralDifferencesAndAccumulates) {
  const LinearCase c = GetParam();
  const int64_t M = c.M, K = c.K, N = c.N, ldx = K + c.pad_x, ldy = N + c.pad_y;
  const LinearShape shape{.rows = M, .in = K, .out = N, .x_stride = ldx, .y_stride = ldy};
  Rng rng(2);
  std::vector<double> X = random_normal(rng, M * ldx);  // (M, K) in rows of ldx
  std::vector<double> W = random_normal(rng, N * K);    // (N, K)
  std::vector<double> Y(M * ldy);                       // (M, N) in rows of ldy
  // Both outputs start from non-zero values: the backward must add to them.
  const std::vector<double> dX0 = random_normal(rng, M * ldx);
  const std::vector<double> dW0 = random_normal(rng, N * K);
  std::vector<double> dX, dW;                  // as the backward leaves them
  std::vector<double> analytic_x, analytic_w;  // what it added
  std::vector<double> dY;                      // strided like Y
  const auto forward = [&] {
    linear_forward(X.data(), W.data(), Y.data(), shape);
    return Y;
  };
  const auto backward = [&](const std::vector<double>& dy) {
    dY = dy;
    dX = dX0;
    dW = dW0;
    linear_backward(X.data(), W.data(), dY.data(), dX.data(), dW.data(), shape);
    analytic_x = added(dX, dX0);
    analytic_w = added(dW, dW0);
  };
  check_gradients(
      {.name = name_of(c),
       .tensors = {{"X", &X, &analytic_x, strided_rows(M, K, ldx)}, {"W", &W, &analytic_w}},
       .forward = forward,
       .backward = backward});
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t k = K; k < ldx; ++k) ASSERT_EQ(dX[m * ldx + k], dX0[m * ldx + k]);
  }

  // dX may be null: only dW is computed, with the same values.
  std::vector<double> dW_only = dW0;
  linear_backward(X.data(), W.data(), dY.data(), static_cast<double*>(nullptr), dW_only.data(),
                  shape);
  EXPECT_EQ(dW_only, dW);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Linear,
    ::testing::Values(LinearCase{1, 1, 1, 0, 0}, LinearCase{3, 4, 5, 0, 0},
                      LinearCase{4, 3, 2, 2, 3},
                      // dX (M rows) split into two row shards; padded strides.
                      LinearCase{kRowShard + 44, 3, 4, 2, 1},
                      // dW (N rows) split into two row shards.
                      LinearCase{5, 3, kRowShard + 4, 0, 0},
                      // Small kernels: the minimal model's q|k|v shape,
                      // their limits, and row shards with a remainder.
                      LinearCase{13, 15, 45, 1, 2}, LinearCase{6, 32, 64, 0, 0},
                      LinearCase{kRowShard + 5, 7, 19, 3, 0},
                      // The register tiles just beyond the small kernels' limits.
                      LinearCase{6, 33, 17, 1, 0}, LinearCase{5, 17, 65, 0, 2},
                      // The register tiles over two row shards: dX per shard, dW
                      // summed per shard; padded strides.
                      LinearCase{kRowShard + 44, 33, 17, 2, 1}),
    linear_case_name);

// dW summed over row shards in two lanes (gemm.cpp), each a contiguous run of shards: 6 shards
// (3 and 3) and 3 shards (1 and 2, the last one partial). The result is one product over all
// rows, to rounding, and the same with one and two threads, bit for bit.
struct LanesCase {
  int64_t rows, width;
};

class WeightGradientLanes : public ::testing::TestWithParam<LanesCase> {};

TEST_P(WeightGradientLanes, AreOneProductAndIndependentOfThreads) {
  const int64_t M = GetParam().rows, K = GetParam().width, N = GetParam().width;
  const LinearShape shape{.rows = M, .in = K, .out = N};
  Rng rng(3);
  const std::vector<double> X = random_normal(rng, M * K);
  const std::vector<double> W = random_normal(rng, N * K);
  const std::vector<double> dY = random_normal(rng, M * N);
  const std::vector<double> dW0 = random_normal(rng, N * K);
  std::vector<double> reference = dW0;  // dW0 + dY^T X in one product
  gemm<double>(true, false, N, K, M, dY.data(), N, X.data(), K, true, reference.data(), K);

  const int saved = num_threads();
  std::vector<double> by_threads[2];
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    by_threads[threads - 1] = dW0;
    linear_backward(X.data(), W.data(), dY.data(), static_cast<double*>(nullptr),
                    by_threads[threads - 1].data(), shape);
  }
  set_num_threads(saved);
  EXPECT_EQ(by_threads[0], by_threads[1]);
  double worst = 0;
  for (int64_t i = 0; i < N * K; ++i) {
    worst =
        std::max(worst, std::abs(by_threads[0][i] - reference[i]) / (1 + std::abs(reference[i])));
  }
  EXPECT_LT(worst, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Shapes, WeightGradientLanes,
                         ::testing::Values(LanesCase{5 * kRowShard + 7, 1024},
                                           LanesCase{2 * kRowShard + 7, 512}),
                         [](const ::testing::TestParamInfo<LanesCase>& info) {
                           return "rows" + std::to_string(info.param.rows) + "_width" +
                                  std::to_string(info.param.width);
                         });

// bias_forward adds the bias to every row and leaves the padding of strided rows alone;
// bias_backward adds Σ_rows dy to dbias as one chain per row shard of kRowShard rows in row
// order, the shards' sums then added in shard order, bit for bit in float, with one and with
// two threads (3 shards, the last partial).
TEST(Bias, ForwardAddsPerRowAndBackwardSumsShardsInOrder) {
  const int64_t R = 2 * kRowShard + 37, OC = 19, ldy = 23;
  const LinearShape shape{.rows = R, .in = 5, .out = OC, .y_stride = ldy};
  Rng rng(5);
  const std::vector<double> y64 = random_normal(rng, R * ldy), b64 = random_normal(rng, OC);
  const std::vector<float> y0(y64.begin(), y64.end()), bias(b64.begin(), b64.end());
  std::vector<float> y = y0;
  bias_forward(y.data(), bias.data(), shape);
  for (int64_t n = 0; n < R; ++n) {
    for (int64_t o = 0; o < ldy; ++o) {
      const float expected = o < OC ? y0[n * ldy + o] + bias[o] : y0[n * ldy + o];
      ASSERT_EQ(y[n * ldy + o], expected) << n << ", " << o;
    }
  }
  std::vector<float> expected(bias);  // dbias starts at the bias's values: "+=" is checked
  for (int64_t s = 0; s * kRowShard < R; ++s) {
    std::vector<float> part(OC, 0.0f);
    for (int64_t n = s * kRowShard; n < std::min(R, (s + 1) * kRowShard); ++n) {
      for (int64_t o = 0; o < OC; ++o) part[o] = part[o] + y0[n * ldy + o];
    }
    for (int64_t o = 0; o < OC; ++o) expected[o] = expected[o] + part[o];
  }
  const int saved = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    std::vector<float> dbias(bias);
    bias_backward(y0.data(), dbias.data(), shape);
    EXPECT_EQ(dbias, expected) << threads << " threads";
  }
  set_num_threads(saved);
}

// The small kernels' forward in float: every output is one chain over the inputs in ascending
// order, each product rounded and then added (nothing is fused: -ffp-contract=off),
// y_rn = (…((0 + x_r0 w_n0) + x_r1 w_n1) …) + x_r,K-1 w_n,K-1, bit for bit, whether the row's
// blocks are computed one at a time (N ≤ 16) or side by side (N in (16, 48]).
struct FloatForwardCase {
  int64_t M, K, N;
};

class SmallLinearFloat : public ::testing::TestWithParam<FloatForwardCase> {};

TEST_P(SmallLinearFloat, ForwardIsOneChainOfProductsAndSumsPerOutput) {
  const auto [M, K, N] = GetParam();
  Rng rng(11);
  const std::vector<double> x64 = random_normal(rng, M * K), w64 = random_normal(rng, N * K);
  const std::vector<float> X(x64.begin(), x64.end()), W(w64.begin(), w64.end());
  std::vector<float> Y(M * N);
  linear_forward(X.data(), W.data(), Y.data(), LinearShape{M, K, N});
  int64_t differing = 0;
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t n = 0; n < N; ++n) {
      float chain = 0;
      for (int64_t k = 0; k < K; ++k) chain = chain + X[r * K + k] * W[n * K + k];
      differing += Y[r * N + n] != chain;
    }
  }
  EXPECT_EQ(differing, 0);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SmallLinearFloat,
                         // The minimal model's q|k|v (three blocks), two blocks, one block; rows
                         // past the groups of eight and over two row shards.
                         ::testing::Values(FloatForwardCase{kRowShard + 13, 15, 45},
                                           FloatForwardCase{29, 15, 20},
                                           FloatForwardCase{21, 32, 48},
                                           FloatForwardCase{19, 15, 16},
                                           FloatForwardCase{11, 7, 64}),
                         [](const ::testing::TestParamInfo<FloatForwardCase>& info) {
                           return "M" + std::to_string(info.param.M) + "_K" +
                                  std::to_string(info.param.K) + "_N" +
                                  std::to_string(info.param.N);
                         });

// gemm (gemm.hpp): every output is one chain of fused multiply-adds over k in ascending order,
// from C's value (accumulate) or +0, c = fma(a_i,K-1, b_K-1,j, … fma(a_i0, b_0j, c)), bit for bit,
// for every transpose, at sizes off the tile's (6 × 16 with AVX2, 8 × 32 with AVX-512, 4 × 4
// scalar) and the cache blocks' (k blocks of 256, row blocks of 16 tiles), with strided
// operands whose padding stays untouched. The chain is what a lane of any vector width
// computes, so this holding on one CPU means the same bits on every CPU.
struct ChainCase {
  bool trans_a, trans_b, accumulate;
  int64_t M, N, K;
  bool sharded = false;  // gemm_sharded: row shards on op(B) packed once for all of them
};

template <typename T>
int64_t outputs_off_the_chain(const ChainCase& c) {
  const int64_t lda = (c.trans_a ? c.M : c.K) + 3, ldb = (c.trans_b ? c.K : c.N) + 1;
  const int64_t ldc = c.N + 2;
  Rng rng(uint64_t(c.M * 7919 + c.N * 31 + c.K));
  const auto values = [&](int64_t n) {
    const std::vector<double> v = random_normal(rng, n);
    return std::vector<T>(v.begin(), v.end());
  };
  const std::vector<T> A = values((c.trans_a ? c.K : c.M) * lda);
  const std::vector<T> B = values((c.trans_b ? c.N : c.K) * ldb);
  const std::vector<T> C0 = values(c.M * ldc);
  std::vector<T> C = C0;
  (c.sharded ? gemm_sharded<T> : gemm<T>)(c.trans_a, c.trans_b, c.M, c.N, c.K, A.data(), lda,
                                          B.data(), ldb, c.accumulate, C.data(), ldc);
  int64_t off = 0;
  for (int64_t i = 0; i < c.M; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      T want = C0[i * ldc + j];  // the padding columns j ≥ N stay as they were
      if (j < c.N) {
        T chain = c.accumulate ? C0[i * ldc + j] : T(0);
        for (int64_t k = 0; k < c.K; ++k) {
          const T a = c.trans_a ? A[k * lda + i] : A[i * lda + k];
          const T b = c.trans_b ? B[j * ldb + k] : B[k * ldb + j];
          chain = std::fma(a, b, chain);
        }
        want = chain;
      }
      off += std::memcmp(&want, &C[i * ldc + j], sizeof(T)) != 0;
    }
  }
  return off;
}

class GemmChain : public ::testing::TestWithParam<ChainCase> {};

TEST_P(GemmChain, FloatIsOneFusedMultiplyAddChainPerOutput) {
  EXPECT_EQ(outputs_off_the_chain<float>(GetParam()), 0);
}

TEST_P(GemmChain, DoubleIsOneFusedMultiplyAddChainPerOutput) {
  EXPECT_EQ(outputs_off_the_chain<double>(GetParam()), 0);
}

std::vector<ChainCase> chain_cases() {
  // One value; smaller than a tile; exactly a tile's rows and columns at one k block; one past
  // a k block; several row blocks with a partial tile; a full column block and one more column.
  const int64_t shapes[][3] = {{1, 1, 1},     {5, 7, 3},     {8, 32, 256}, {7, 17, 257},
                               {200, 33, 40}, {13, 40, 600}, {9, 2049, 5}};
  std::vector<ChainCase> cases;
  for (const auto& s : shapes) {
    for (int flags = 0; flags < 8; ++flags) {
      cases.push_back({bool(flags & 1), bool(flags & 2), bool(flags & 4), s[0], s[1], s[2]});
    }
  }
  // Sharded: three row shards, the last partial, over two k blocks; and two column blocks.
  for (int flags = 0; flags < 8; ++flags) {
    cases.push_back(
        {bool(flags & 1), bool(flags & 2), bool(flags & 4), 2 * kRowShard + 9, 40, 300, true});
  }
  for (const bool trans_b : {false, true}) {
    cases.push_back({false, trans_b, trans_b, kRowShard + 3, 2049, 257, true});
  }
  return cases;
}

// linear_backward's dx += dy weight over three row shards, the weight packed once for all of
// them: each value one chain of fused multiply-adds over the outputs o in ascending order,
// from dx's value, as gemm's contract says.
TEST(LinearBackwardDx, IsOneFusedMultiplyAddChainPerValue) {
  const int64_t R = 2 * kRowShard + 9, C = 40, OC = 300;
  Rng rng(7);
  const auto values = [&](int64_t n) {
    const std::vector<double> v = random_normal(rng, n);
    return std::vector<float>(v.begin(), v.end());
  };
  const std::vector<float> X = values(R * C), W = values(OC * C), dY = values(R * OC),
                           dX0 = values(R * C);
  std::vector<float> dX = dX0, dW(OC * C, 0.0f);
  linear_backward(X.data(), W.data(), dY.data(), dX.data(), dW.data(),
                  LinearShape{.rows = R, .in = C, .out = OC});
  int64_t off = 0;
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t c = 0; c < C; ++c) {
      float chain = dX0[r * C + c];
      for (int64_t o = 0; o < OC; ++o) chain = std::fma(dY[r * OC + o], W[o * C + c], chain);
      off += std::memcmp(&chain, &dX[r * C + c], sizeof(float)) != 0;
    }
  }
  EXPECT_EQ(off, 0);
}

// DxInto::assign writes dx = dy weight over whatever dx held (NaN here) with the bits of adding
// into +0, for the register tiles (three row shards, two depth blocks of the outputs) and the
// small kernels (C ≤ 32, OC ≤ 64, rows padded to a stride), whose padding stays untouched.
TEST(LinearBackwardDx, AssignIsAddingToPositiveZero) {
  struct Shape {
    int64_t R, C, OC, ldx;
  };
  for (const Shape& s : {Shape{2 * kRowShard + 9, 40, 300, 40}, Shape{kRowShard + 5, 7, 19, 10}}) {
    SCOPED_TRACE(::testing::Message() << "R " << s.R << " C " << s.C << " OC " << s.OC);
    Rng rng(11);
    const auto values = [&](int64_t n) {
      const std::vector<double> v = random_normal(rng, n);
      return std::vector<float>(v.begin(), v.end());
    };
    const std::vector<float> X = values(s.R * s.ldx), W = values(s.OC * s.C),
                             dY = values(s.R * s.OC);
    const LinearShape shape{.rows = s.R, .in = s.C, .out = s.OC, .x_stride = s.ldx};
    std::vector<float> added(s.R * s.ldx, 0.0f), dW_added(s.OC * s.C, 0.0f);
    linear_backward(X.data(), W.data(), dY.data(), added.data(), dW_added.data(), shape);
    std::vector<float> assigned(s.R * s.ldx, std::nanf("")), dW(s.OC * s.C, 0.0f);
    for (int64_t r = 0; r < s.R; ++r) {
      std::fill_n(assigned.begin() + r * s.ldx + s.C, s.ldx - s.C, 5.0f);
    }
    linear_backward(X.data(), W.data(), dY.data(), assigned.data(), dW.data(), shape,
                    DxInto::assign);
    int64_t off = 0, padding = 0;
    for (int64_t r = 0; r < s.R; ++r) {
      off += std::memcmp(&added[r * s.ldx], &assigned[r * s.ldx], s.C * sizeof(float)) != 0;
      for (int64_t c = s.C; c < s.ldx; ++c) padding += assigned[r * s.ldx + c] != 5.0f;
    }
    EXPECT_EQ(off, 0);
    EXPECT_EQ(padding, 0);
    EXPECT_EQ(std::memcmp(dW.data(), dW_added.data(), dW.size() * sizeof(float)), 0);
  }
}

// linear_by_shards against the layer's own kernels on the whole output: linear_forward and
// bias_forward, the same gradient applied to all rows, bias_backward and linear_backward; dx,
// dweight and dbias bit for bit (dweight and dbias start from nonzero values: "+=" is
// checked), with 1, 2 and 4 threads (4: two shards of each weight lane per round), on a
// shape of the products (7 shards, x in strided rows) and one of the small kernels; the
// gradient sees each row once, in ranges inside its shard that follow each other.
TEST(LinearByShards, IsTheLayerAndItsBackwardBitForBit) {
  struct Shape {
    int64_t R, C, OC, ldx;
  };
  for (const Shape& s : {Shape{6 * kRowShard + 9, 40, 300, 43}, Shape{kRowShard + 5, 7, 19, 7}}) {
    SCOPED_TRACE(::testing::Message() << "R " << s.R << " C " << s.C << " OC " << s.OC);
    Rng rng(12);
    const auto values = [&](int64_t n) {
      const std::vector<double> v = random_normal(rng, n);
      return std::vector<float>(v.begin(), v.end());
    };
    const std::vector<float> X = values(s.R * s.ldx), W = values(s.OC * s.C), b = values(s.OC);
    const std::vector<float> dW0 = values(s.OC * s.C), db0 = values(s.OC);
    const LinearShape shape{.rows = s.R, .in = s.C, .out = s.OC, .x_stride = s.ldx};
    // The loss's gradient of one row, from its output alone: dy = y · (y − 1) / 2.
    const auto row_gradient = [&](float* y) {
      for (int64_t o = 0; o < s.OC; ++o) y[o] = y[o] * (y[o] - 1.0f) * 0.5f;
    };
    std::vector<float> y(s.R * s.OC), dx(s.R * s.ldx, 0.0f), dW = dW0, db = db0;
    linear_forward(X.data(), W.data(), y.data(), shape);
    bias_forward(y.data(), b.data(), shape);
    for (int64_t n = 0; n < s.R; ++n) row_gradient(y.data() + n * s.OC);
    bias_backward(y.data(), db.data(), shape);
    linear_backward(X.data(), W.data(), y.data(), dx.data(), dW.data(), shape, DxInto::assign);

    const int saved = num_threads();
    for (int threads : {1, 2, 4}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads");
      set_num_threads(threads);
      std::vector<float> dx_s(s.R * s.ldx, 0.0f), dW_s = dW0, db_s = db0;
      std::vector<int64_t> next(shard_count(s.R));  // each shard's next row
      for (size_t k = 0; k < next.size(); ++k) next[k] = int64_t(k) * kRowShard;
      linear_by_shards<float>(X.data(), W.data(), b.data(), dx_s.data(), dW_s.data(), db_s.data(),
                              shape, DxInto::assign,
                              [&](int64_t shard, int64_t n0, int64_t n1, float* ys) {
                                EXPECT_EQ(n0, next[shard]);
                                EXPECT_LT(n0, n1);
                                EXPECT_LE(n1, std::min(s.R, (shard + 1) * kRowShard));
                                next[shard] = n1;
                                for (int64_t n = 0; n < n1 - n0; ++n) row_gradient(ys + n * s.OC);
                              });
      for (size_t k = 0; k < next.size(); ++k) {
        EXPECT_EQ(next[k], std::min(s.R, (int64_t(k) + 1) * kRowShard)) << k;
      }
      EXPECT_EQ(std::memcmp(dx_s.data(), dx.data(), dx.size() * sizeof(float)), 0);
      EXPECT_EQ(std::memcmp(dW_s.data(), dW.data(), dW.size() * sizeof(float)), 0);
      EXPECT_EQ(std::memcmp(db_s.data(), db.data(), db.size() * sizeof(float)), 0);
    }
    set_num_threads(saved);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmChain, ::testing::ValuesIn(chain_cases()),
                         [](const ::testing::TestParamInfo<ChainCase>& info) {
                           const ChainCase& c = info.param;
                           return std::string(c.sharded ? "Sharded" : "") +
                                  (c.trans_a ? "T" : "N") + (c.trans_b ? "T" : "N") +
                                  (c.accumulate ? "_acc" : "_set") + "_M" + std::to_string(c.M) +
                                  "_N" + std::to_string(c.N) + "_K" + std::to_string(c.K);
                         });

}  // namespace
}  // namespace normlab
