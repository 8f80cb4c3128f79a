// rope_apply (rope.hpp) in double precision:
//   - the forward against the documented rotation θ_{t,p} = (t + offset) · base^(−2p/dh), for
//     each head, pair, row of every sequence in the batch, on q and k, with v untouched;
//   - forward then inverse is the identity;
//   - the inverse is the exact adjoint (the backward pass): ⟨R x, y⟩ = ⟨x, Rᵀ y⟩, and it is
//     the gradient of L = Σ w ⊙ R x by central differences;
//   - the point of RoPE: ⟨R q_t, R k_s⟩ depends only on t − s (shifting the offset keeps it).
// And in float, the bits: each rotated feature is the documented pair of fused multiply-adds
// with float cos and sin, forward and inverse (the vector path, 16 features at a time, must
// give exactly these).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/kernels/rope.hpp"
#include "core/parallel.hpp"
#include "support/gradcheck.hpp"
#include "support/kernel_case.hpp"

namespace normlab {
namespace {

using testing::check_gradients;
using testing::random_normal;
using testing::weighted_sum;

struct RopeCase {
  int64_t batch, len;
  int width, heads;
  int64_t offset;
};

std::string name_of(const RopeCase& c) {
  return "B" + std::to_string(c.batch) + "_T" + std::to_string(c.len) + "_D" +
         std::to_string(c.width) + "_H" + std::to_string(c.heads) + "_off" +
         std::to_string(c.offset);
}

std::string rope_case_name(const ::testing::TestParamInfo<RopeCase>& info) {
  return name_of(info.param);
}

constexpr double kBase = 100.0;  // small, so that every pair turns noticeably

// rope_apply with a table prepared for the shape and offset.
template <typename T>
void rotate(T* qkv, QkvShape shape, Rotation rotation, int64_t offset) {
  RopeTable<T> table;
  prepare_rope_table(table, shape.len, shape.width / shape.heads, kBase, offset);
  rope_apply(qkv, shape, table, rotation);
}

class Rope : public ::testing::TestWithParam<RopeCase> {};

TEST_P(Rope, ForwardRotatesEachPairByItsAngle) {
  const auto [B, T, D, H, offset] = GetParam();
  const int dh = D / H;
  Rng rng(9);
  const std::vector<double> x = random_normal(rng, B * T * 3 * D);
  std::vector<double> y = x;
  rotate(y.data(), {B, T, D, H}, Rotation::forward, offset);
  for (int64_t r = 0; r < B * T; ++r) {
    const double t = double(r % T + offset);
    for (int part = 0; part < 2; ++part) {
      for (int h = 0; h < H; ++h) {
        for (int p = 0; p < dh / 2; ++p) {
          const int64_t i = r * 3 * D + part * D + h * dh + 2 * p;
          const double theta = t * std::pow(kBase, -2.0 * p / dh);
          const double c = std::cos(theta), s = std::sin(theta);
          EXPECT_NEAR(y[i], x[i] * c - x[i + 1] * s, 1e-13) << "row " << r << " pair " << p;
          EXPECT_NEAR(y[i + 1], x[i] * s + x[i + 1] * c, 1e-13) << "row " << r << " pair " << p;
        }
      }
    }
    for (int d = 0; d < D; ++d) {
      ASSERT_EQ(y[r * 3 * D + 2 * D + d], x[r * 3 * D + 2 * D + d]) << "v was rotated";
    }
  }
}

TEST_P(Rope, InverseUndoesForward) {
  const auto [B, T, D, H, offset] = GetParam();
  Rng rng(10);
  const std::vector<double> x = random_normal(rng, B * T * 3 * D);
  std::vector<double> y = x;
  rotate(y.data(), {B, T, D, H}, Rotation::forward, offset);
  rotate(y.data(), {B, T, D, H}, Rotation::inverse, offset);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(y[i] - x[i]));
  EXPECT_LT(worst, 1e-14);
}

TEST_P(Rope, InverseIsTheAdjoint) {
  const auto [B, T, D, H, offset] = GetParam();
  Rng rng(11);
  const std::vector<double> x = random_normal(rng, B * T * 3 * D);
  const std::vector<double> y = random_normal(rng, B * T * 3 * D);
  std::vector<double> Rx = x, Rty = y;
  rotate(Rx.data(), {B, T, D, H}, Rotation::forward, offset);
  rotate(Rty.data(), {B, T, D, H}, Rotation::inverse, offset);
  const double lhs = weighted_sum(Rx, y), rhs = weighted_sum(x, Rty);
  EXPECT_NEAR(lhs, rhs, 1e-12 * (std::abs(lhs) + 1));
}

TEST_P(Rope, InverseIsTheGradient) {
  const RopeCase c = GetParam();
  const QkvShape shape{c.batch, c.len, c.width, c.heads};
  Rng rng(12);
  std::vector<double> x = random_normal(rng, c.batch * c.len * 3 * c.width), y, dx;
  const auto forward = [&] {  // y = R x
    y = x;
    rotate(y.data(), shape, Rotation::forward, c.offset);
    return y;
  };
  const auto backward = [&](const std::vector<double>& dy) {  // dx = Rᵀ dy
    dx = dy;
    rotate(dx.data(), shape, Rotation::inverse, c.offset);
  };
  check_gradients(
      {.name = name_of(c), .tensors = {{"x", &x, &dx}}, .forward = forward, .backward = backward});
}

INSTANTIATE_TEST_SUITE_P(Shapes, Rope,
                         ::testing::Values(RopeCase{1, 5, 4, 1, 0}, RopeCase{2, 7, 8, 2, 0},
                                           RopeCase{2, 3, 12, 3, 5},
                                           // more rows than one shard
                                           RopeCase{3, kRowShard / 2, 4, 2, 1}),
                         rope_case_name);

// Float: (x0, x1) → (fma(x0, c, −(x1 s)), fma(x0, s, x1 c)), s negated for the inverse, with
// c and s the float roundings of the double cos and sin; compared bit for bit.
class RopeFloat : public ::testing::TestWithParam<RopeCase> {};

TEST_P(RopeFloat, EachPairIsTheDocumentedFusedMultiplyAdds) {
  const auto [B, T, D, H, offset] = GetParam();
  const int dh = D / H;
  Rng rng(14);
  const std::vector<double> x64 = random_normal(rng, B * T * 3 * D);
  const std::vector<float> x(x64.begin(), x64.end());
  for (const bool inverse : {false, true}) {
    std::vector<float> y = x;
    rotate(y.data(), {B, T, D, H}, inverse ? Rotation::inverse : Rotation::forward, offset);
    int64_t differing = 0;
    for (int64_t r = 0; r < B * T; ++r) {
      const double t = double(r % T + offset);
      for (int part = 0; part < 3; ++part) {
        for (int h = 0; h < H; ++h) {
          for (int p = 0; p < dh / 2; ++p) {
            const int64_t i = r * 3 * D + part * D + h * dh + 2 * p;
            const double theta = t * std::pow(kBase, -2.0 * p / dh);
            const float c = float(std::cos(theta)), s = float(std::sin(theta)) * (inverse ? -1 : 1);
            const float x0 = x[i], x1 = x[i + 1];
            const float y0 = part == 2 ? x0 : std::fma(x0, c, -(x1 * s));
            const float y1 = part == 2 ? x1 : std::fma(x0, s, x1 * c);
            differing += (y[i] != y0) + (y[i + 1] != y1);
          }
        }
      }
    }
    EXPECT_EQ(differing, 0) << (inverse ? "inverse" : "forward");
  }
}

// Head widths below, at and across one block of 16 features, and with a masked tail.
INSTANTIATE_TEST_SUITE_P(Shapes, RopeFloat,
                         ::testing::Values(RopeCase{2, 9, 4, 2, 0}, RopeCase{2, 7, 64, 4, 3},
                                           RopeCase{1, 5, 48, 2, 0}, RopeCase{1, 6, 68, 2, 1},
                                           RopeCase{3, kRowShard / 2, 40, 4, 1}),
                         rope_case_name);

TEST(RopeRelative, ScoresDependOnlyOnTheDistance) {
  const int64_t T = 6;
  const int D = 8, H = 2;
  Rng rng(13);
  const std::vector<double> x = random_normal(rng, T * 3 * D);
  auto scores = [&](int64_t offset) {
    std::vector<double> y = x;
    rotate(y.data(), {1, T, D, H}, Rotation::forward, offset);
    std::vector<double> out;  // ⟨q_i, k_j⟩ of head 1 for all i, j
    for (int64_t i = 0; i < T; ++i) {
      for (int64_t j = 0; j < T; ++j) {
        double dot = 0;
        for (int e = 0; e < D / H; ++e)
          dot += y[i * 3 * D + D / H + e] * y[j * 3 * D + D + D / H + e];
        out.push_back(dot);
      }
    }
    return out;
  };
  const std::vector<double> a = scores(0), b = scores(17);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12);
  // ...while the rotated vectors themselves do change with the offset.
  std::vector<double> y0 = x, y17 = x;
  rotate(y0.data(), {1, T, D, H}, Rotation::forward, 0);
  rotate(y17.data(), {1, T, D, H}, Rotation::forward, 17);
  EXPECT_GT(std::abs(y0[0] - y17[0]) + std::abs(y0[1] - y17[1]), 1e-3);
}

// One table prepared again for another offset, then the first again, rotates as fresh tables do:
// prepare_rope_table refills whenever any of its shape's values changes.
TEST(RopeTable, PreparedAgainForAnotherShapeMatchesAFreshTable) {
  const QkvShape shape{2, 6, 8, 2};
  Rng rng(15);
  const std::vector<double> x = random_normal(rng, shape.batch * shape.len * 3 * shape.width);
  RopeTable<double> reused;
  for (const int64_t offset : {int64_t{0}, int64_t{17}, int64_t{0}}) {
    std::vector<double> y = x, fresh = x;
    prepare_rope_table(reused, shape.len, shape.width / shape.heads, kBase, offset);
    rope_apply(y.data(), shape, reused, Rotation::forward);
    rotate(fresh.data(), shape, Rotation::forward, offset);
    EXPECT_EQ(y, fresh) << "offset " << offset;
  }
  std::vector<double> y = x;
  prepare_rope_table(reused, shape.len, shape.width / shape.heads, 1e4, 0);
  rope_apply(y.data(), shape, reused, Rotation::forward);
  std::vector<double> fresh = x;
  rotate(fresh.data(), shape, Rotation::forward, 0);  // base 100
  EXPECT_NE(y, fresh) << "a new base must refill the table";
}

TEST(RopeTable, AnotherShapeIsRefused) {
  RopeTable<float> table;
  prepare_rope_table(table, 5, 4, kBase);
  std::vector<float> qkv(2 * 6 * 3 * 8);
  EXPECT_THROW(rope_apply(qkv.data(), QkvShape{2, 6, 8, 2}, table, Rotation::forward),
               std::logic_error);
}

}  // namespace
}  // namespace normlab
