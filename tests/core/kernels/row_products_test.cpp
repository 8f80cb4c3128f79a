// rows_times_mat (block16.hpp), the products of attention's heads, against the one-row chain it
// promises: out[r][k] = Σ_{c in [c0, c1)} X(r, c) · m[c][k], summed from zero over c in ascending
// order, one rounded product and one rounded sum per term (the build does not fuse them,
// -ffp-contract=off). It multiplies several blocks of columns per pass where the vector
// registers allow, so every count of blocks from one to several passes' worth (with a last
// partial pass), every size of row group (4, 2, 1) and both orders of X (rows along memory, as
// queries; columns along memory, as the transposed probabilities) are compared bit for bit.
// Values span many magnitudes, so a sum in another order or a block read from the wrong
// columns would round differently.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/kernels/block16.hpp"

namespace normlab {
namespace {

struct RowProductCase {
  int64_t rows;     // rows of X and of out
  int64_t sum_len;  // c1: the summed index runs over [c0, c1)
  int64_t blocks;   // cols = 16 · blocks
  bool x_by_rows;   // X(r, c) at r·sum_len + c; else at r + c·rows
  bool from_group_start;
};

std::vector<float> spread_values(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::vector<float> v(n);
  for (auto& x : v) x = float(std::ldexp(mantissa(rng), exponent(rng)));
  return v;
}

void expect_one_row_chains(const RowProductCase& p, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t cols = p.blocks * kBlock;
  const std::vector<float> x = spread_values(p.rows * p.sum_len, rng);  // (rows, sum_len)
  const std::vector<float> m = spread_values(p.sum_len * cols, rng);    // (sum_len, cols)
  const int64_t rs = p.x_by_rows ? p.sum_len : 1;
  const int64_t cs = p.x_by_rows ? 1 : p.rows;
  std::vector<float> out(p.rows * cols, NAN);
  rows_times_mat(p.rows, x.data(), rs, cs, p.from_group_start, p.sum_len, m.data(), cols, cols,
                 out.data(), cols);
  // The group of row r starts at the largest multiple of 4, 2 or 1 that in_row_groups<4> gives.
  std::vector<int64_t> group_start(p.rows);
  for (int64_t r = 0, size = kRows; r < p.rows; size /= 2) {
    for (; r + size <= p.rows; r += size) {
      for (int64_t i = 0; i < size; ++i) group_start[r + i] = r;
    }
  }
  for (int64_t r = 0; r < p.rows; ++r) {
    const int64_t c0 = p.from_group_start ? group_start[r] : 0;
    for (int64_t k = 0; k < cols; ++k) {
      float acc = 0.0f;
      for (int64_t c = c0; c < p.sum_len; ++c) {
        const float term = x[r * rs + c * cs] * m[c * cols + k];
        acc = acc + term;
      }
      ASSERT_EQ(std::bit_cast<uint32_t>(out[r * cols + k]), std::bit_cast<uint32_t>(acc))
          << "rows " << p.rows << " blocks " << p.blocks << " row " << r << " column " << k << ": "
          << out[r * cols + k] << " vs " << acc;
    }
  }
}

TEST(RowProducts, EveryBlockCountAndRowGroupIsTheOneRowChain) {
  uint32_t seed = 1;
  for (int64_t blocks = 1; blocks <= 33; ++blocks) {
    for (int64_t rows : {1, 2, 3, 4, 7}) {
      for (bool by_rows : {true, false}) {
        expect_one_row_chains({rows, 23, blocks, by_rows, false}, seed++);
      }
    }
  }
}

TEST(RowProducts, SumsFromTheGroupStartSkipOnlyEarlierColumns) {
  uint32_t seed = 1000;
  for (int64_t blocks : {1, 4, 7, 13}) {
    for (int64_t rows : {5, 11, 40}) {
      expect_one_row_chains({rows, rows, blocks, false, true}, seed++);
    }
  }
}

TEST(RowProducts, AnEmptySumWritesZeros) {
  std::vector<float> out(2 * 3 * kBlock, NAN);
  const std::vector<float> x(2, 1.0f), m(3 * kBlock, 1.0f);
  rows_times_mat(2, x.data(), 1, 2, false, 0, m.data(), 3 * kBlock, 3 * kBlock, out.data(),
                 3 * kBlock);
  for (float v : out) EXPECT_EQ(std::bit_cast<uint32_t>(v), 0u);
}

}  // namespace
}  // namespace normlab
