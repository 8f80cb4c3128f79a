// EMA and BEMA against the formulas of docs/reference.md §2, computed by hand; schedules.
#include <gtest/gtest.h>

#include <cmath>

#include "normlab/optim/averaging.hpp"
#include "normlab/optim/schedule.hpp"

namespace normlab {
namespace {

TEST(Averaging, FollowsTheBemaFormula) {
  AveragingConfig c;
  c.every = 2;
  c.start = 3;
  c.kappa = 0.5;
  c.eta = 0.2;
  c.rho = 10;
  c.gamma = 1;
  WeightAverager avg(c, 1);
  // θ_s = s² for a scalar parameter; averaging starts at step 3 with θ_0 = 9.
  double ema = 0, bema = 0, theta0 = 0;
  for (int64_t s = 1; s <= 11; ++s) {
    const float theta = static_cast<float>(s * s);
    avg.observe(s, {theta});
    if (s == 3) {
      theta0 = ema = bema = theta;
    } else if (s > 3 && (s - 3) % 2 == 0) {
      const double t = s - 3;
      const double beta = std::pow(10 + t, -0.5), alpha = std::pow(10 + t, -0.2);
      ema = (1 - beta) * ema + beta * theta;
      bema = alpha * (theta - theta0) + ema;
    }
    EXPECT_EQ(avg.started(), s >= 3);
    if (s >= 3) {
      EXPECT_NEAR(avg.ema()[0], ema, 1e-4 * std::abs(ema)) << "step " << s;
      EXPECT_NEAR(avg.bema()[0], bema, 1e-4 * std::abs(bema)) << "step " << s;
    }
  }
  // BEMA leads EMA on a rising parameter (the bias correction removes the lag).
  EXPECT_GT(avg.bema()[0], avg.ema()[0]);
}

TEST(Averaging, OffPeriodStepsChangeNothing) {
  AveragingConfig c;
  c.every = 5;
  WeightAverager avg(c, 2);
  avg.observe(0, {1, 2});
  avg.observe(1, {100, 200});
  EXPECT_EQ(avg.ema()[0], 1.0f);
  EXPECT_EQ(avg.bema()[1], 2.0f);
}

TEST(Schedule, WarmupThenDecay) {
  const double lr = 0.1;
  EXPECT_NEAR(learning_rate(0, 100, 10, lr, Decay::linear, 0), 0.01, 1e-12);
  EXPECT_NEAR(learning_rate(9, 100, 10, lr, Decay::linear, 0), 0.1, 1e-12);
  EXPECT_NEAR(learning_rate(55, 100, 10, lr, Decay::linear, 0), 0.05, 1e-12);
  EXPECT_NEAR(learning_rate(100, 100, 10, lr, Decay::linear, 0.1), 0.01, 1e-12);
  EXPECT_NEAR(learning_rate(55, 100, 10, lr, Decay::cosine, 0), 0.05, 1e-12);
  EXPECT_NEAR(learning_rate(10, 100, 10, lr, Decay::cosine, 0), 0.1, 1e-12);
  EXPECT_NEAR(learning_rate(70, 100, 10, lr, Decay::constant, 0), 0.1, 1e-12);
}

TEST(Schedule, WarmupStableDecay) {
  // 100 steps, warmup 10, decay over 20% of the 90 steps after warmup: 18 steps from 82.
  const double lr = 0.1;
  EXPECT_EQ(wsd_decay_start(100, 10, 0.2), 82);
  EXPECT_NEAR(learning_rate(5, 100, 10, lr, Decay::wsd, 0), 0.06, 1e-12);   // warmup
  EXPECT_NEAR(learning_rate(10, 100, 10, lr, Decay::wsd, 0), 0.1, 1e-12);   // stable
  EXPECT_NEAR(learning_rate(81, 100, 10, lr, Decay::wsd, 0), 0.1, 1e-12);   // last stable step
  EXPECT_NEAR(learning_rate(91, 100, 10, lr, Decay::wsd, 0), 0.05, 1e-12);  // half way down
  EXPECT_NEAR(learning_rate(100, 100, 10, lr, Decay::wsd, 0.1), 0.01, 1e-12);
  // decay_fraction 0.5: 45 decay steps from step 55.
  EXPECT_EQ(wsd_decay_start(100, 10, 0.5), 55);
  EXPECT_NEAR(learning_rate(76, 100, 10, lr, Decay::wsd, 0, 0.5), 0.1 * (1 - 21.0 / 45.0), 1e-12);
  EXPECT_EQ(parse_decay("wsd"), Decay::wsd);
}

}  // namespace
}  // namespace normlab
