// FlushSubnormals (core/flush_subnormals.hpp) in every task of parallel.hpp: inside a task a
// subnormal input reads as zero and a subnormal result is written as zero, on one thread and on
// two; outside, the caller's own mode (IEEE 754's gradual underflow here) is back.
#include "core/flush_subnormals.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/kernels/gemm.hpp"
#include "core/parallel.hpp"
#include "normlab/core/threads.hpp"

namespace normlab {
namespace {

using L = std::numeric_limits<float>;

// volatile: the compiler may not fold these at compile time, where no mode applies.
volatile float g_tiny = 0x1p-70f;              // normal; its square 2^-140 is subnormal
volatile float g_subnormal = L::denorm_min();  // 2^-149
volatile float g_scale = 0x1p+40f;

float square_of_tiny() {
  return g_tiny * g_tiny;
}
float scaled_subnormal() {  // 2^-109 if the input is read as it is, 0 if read as zero
  return g_subnormal * g_scale;
}
// Values are compared by their bits: with the flush modes on, a float comparison reads a
// subnormal as zero.
uint32_t bits(float x) {
  return std::bit_cast<uint32_t>(x);
}

#if defined(__x86_64__) || defined(__aarch64__)
TEST(FlushSubnormals, OutsideATaskTheCallersGradualUnderflowHolds) {
  EXPECT_EQ(bits(square_of_tiny()), bits(0x1p-140f));
  EXPECT_EQ(bits(scaled_subnormal()), bits(0x1p-109f));
}

TEST(FlushSubnormals, TheGuardFlushesAndGivesTheModeBack) {
  {
    const FlushSubnormals flush;
    EXPECT_EQ(bits(square_of_tiny()), bits(0.0f));
    EXPECT_EQ(bits(scaled_subnormal()), bits(0.0f));
    {
      const FlushSubnormals nested;  // already set: leaves the mode as it finds it
      EXPECT_EQ(bits(square_of_tiny()), bits(0.0f));
    }
    EXPECT_EQ(bits(square_of_tiny()), bits(0.0f)) << "a nested guard ended the outer one's mode";
  }
  EXPECT_EQ(bits(square_of_tiny()), bits(0x1p-140f));
}

TEST(FlushSubnormals, EveryTaskFlushesOnOneThreadAndOnTwo) {
  for (const int threads : {1, 2}) {
    set_num_threads(threads);
    std::vector<float> squares(8, -1.0f), scaled(8, -1.0f);
    parallel_for(8, [&](int64_t i) {
      squares[i] = square_of_tiny();
      scaled[i] = scaled_subnormal();
    });
    for (int i = 0; i < 8; ++i) {
      EXPECT_EQ(bits(squares[i]), bits(0.0f)) << "task " << i << ", " << threads << " threads";
      EXPECT_EQ(bits(scaled[i]), bits(0.0f)) << "task " << i << ", " << threads << " threads";
    }
    EXPECT_EQ(bits(square_of_tiny()), bits(0x1p-140f))
        << "the caller's mode after " << threads << " threads";
  }
  set_num_threads(1);
}

// y (1, 1) = x (1, C) · weight (1, C)^T, x and weight zero but for their first values, by a
// linear layer's forward (in tasks): for C = 1 its narrow kernel, for C = 64 the products.
float linear_of_first(int64_t C, float x0, float weight0) {
  std::vector<float> x(C, 0.0f), weight(C, 0.0f);
  x[0] = x0, weight[0] = weight0;
  float y = -1.0f;
  linear_forward(x.data(), weight.data(), &y, LinearShape{.rows = 1, .in = C, .out = 1});
  return y;
}

TEST(FlushSubnormals, LinearLayersFlushTheirSubnormals) {
  for (const int64_t C : {1, 64}) {
    EXPECT_EQ(bits(linear_of_first(C, 0x1p-70f, 0x1p-70f)), bits(0.0f))
        << "2^-140 is subnormal; C " << C;
    EXPECT_EQ(bits(linear_of_first(C, L::denorm_min(), 0x1p+40f)), bits(0.0f))
        << "a subnormal input reads as zero; C " << C;
    EXPECT_EQ(bits(linear_of_first(C, 0x1p-70f, 0x1p+40f)), bits(0x1p-30f))
        << "normal values; C " << C;
  }
}
#endif

}  // namespace
}  // namespace normlab
