// The arena that holds a pass's activations (src/model/arena.hpp): every declared buffer gets
// its own 64-byte-aligned range of the block, an unneeded one none, a shared slot the largest
// count asked for, and the block is reallocated only for a larger total.
#include "model/arena.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>

namespace normlab {
namespace {

bool aligned64(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 64 == 0;
}

TEST(Arena, DeclaredBuffersAreAlignedAndDisjoint) {
  Arena<float> a;
  float *x = nullptr, *z = nullptr;
  std::span<float> y, w;
  a.declare(x, 10);
  a.declare(y, 0);
  a.declare(z, 17);
  a.declare(w, 1);
  // 16 floats per 64-byte line: 10 → 16, 0 → 0, 17 → 32, 1 → 16.
  EXPECT_EQ(a.elements(), 64);
  a.carve();
  ASSERT_NE(x, nullptr);
  ASSERT_NE(z, nullptr);
  EXPECT_TRUE(y.empty());
  EXPECT_EQ(y.data(), nullptr);
  EXPECT_EQ(w.size(), 1u);
  EXPECT_TRUE(aligned64(x));
  EXPECT_TRUE(aligned64(z));
  EXPECT_TRUE(aligned64(w.data()));
  // In declaration order, each starting where the one before it ends (padded).
  EXPECT_EQ(z, x + 16);
  EXPECT_EQ(w.data(), z + 32);
}

TEST(Arena, LinesHoldEightDoubles) {
  Arena<double> a;
  double *x = nullptr, *y = nullptr;
  a.declare(x, 9);
  a.declare(y, 8);
  EXPECT_EQ(a.elements(), 24);
  a.carve();
  EXPECT_TRUE(aligned64(x));
  EXPECT_EQ(y, x + 16);
}

TEST(Arena, SharedSlotTakesTheLargestCount) {
  Arena<float> a;
  float *shared = nullptr, *other = nullptr;
  a.declare_at_least(shared, 5);
  a.declare(other, 16);
  a.declare_at_least(shared, 40);
  a.declare_at_least(shared, 3);
  EXPECT_EQ(a.elements(), 48 + 16);
  a.carve();
  EXPECT_EQ(other, shared + 48);
}

TEST(Arena, BlockIsReallocatedOnlyForALargerTotal) {
  Arena<float> a;
  float* x = nullptr;
  a.declare(x, 1000);
  a.carve();
  float* first = x;
  a.clear();
  a.declare(x, 200);
  a.carve();
  EXPECT_EQ(x, first);  // a smaller total: the same block
  a.clear();
  float* y = nullptr;
  a.declare(x, 1000);
  a.declare(y, 5000);
  a.carve();
  EXPECT_EQ(y, x + 1008);
  EXPECT_TRUE(aligned64(x));
}

TEST(Arena, ClearForgetsTheSlots) {
  Arena<float> a;
  float *x = nullptr, *y = nullptr;
  a.declare(x, 100);
  a.clear();
  a.declare(y, 3);
  EXPECT_EQ(a.elements(), 16);
  a.carve();
  EXPECT_EQ(x, nullptr);  // declared before clear: never pointed
  EXPECT_NE(y, nullptr);
}

}  // namespace
}  // namespace normlab
