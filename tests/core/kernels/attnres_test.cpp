// res_rstd / res_mix_forward / res_mix_backward (attnres.hpp) in double precision:
//   - the forward against the documented formula (softmax over w · RMSNorm_g(s_k));
//   - the source gradients (the rows at each shard's edges) and dw, dg against central
//     differences of L = Σ c ⊙ x, with N > kRowShard so the per-shard partials of dw, dg are
//     summed, and the "+=" contract;
//   - one source (α = 1, x = s, no parameter gradient) and zero query (uniform α);
//   - res_logits then res_mix_from_logits (logits computed per source for several points, as
//     the model does) give res_mix_forward's x and α bit for bit, in float.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/kernels/attnres.hpp"
#include "core/parallel.hpp"
#include "support/gradcheck.hpp"
#include "support/kernel_case.hpp"

namespace normlab {
namespace {

using testing::added;
using testing::check_gradients;
using testing::KernelTensor;
using testing::random_normal;
using testing::strided_rows;

constexpr double kEps = 1e-5;

// K sources of (N, D) in one buffer, and the pointers the kernels take.
struct Mix {
  int64_t N;
  int D, K;
  std::vector<double> src, rstd, w, g, x, alpha;
  std::vector<const double*> sp, rp;

  Mix(int64_t n, int d, int k, Rng& rng) : N(n), D(d), K(k) {
    // Sources of different scales, so the RMSNorm of the keys matters.
    src.resize(K * N * D);
    for (int j = 0; j < K; ++j) {
      const std::vector<double> s = random_normal(rng, N * D, 0.5 + j, 0.2 * j);
      std::copy(s.begin(), s.end(), src.begin() + j * N * D);
    }
    // Logits w · RMSNorm(s) have a spread of about 0.8·√D: beyond D = 16 the query is scaled
    // down so that it stays near 3.2 and no source's weight is so small that its gradient is
    // lost in the central differences' truncation error (at D = 64, unscaled, one source's
    // gradient missed the 1e-6 bound: 4.6e-6, the same with the kernel of before common_width).
    w = random_normal(rng, D, 0.8 * std::min(1.0, std::sqrt(16.0 / D)));
    g = random_normal(rng, D, 0.3, 1.0);
    rstd.resize(K * N);
    x.resize(N * D);
    alpha.resize(N * K);
    for (int j = 0; j < K; ++j) {
      sp.push_back(src.data() + j * N * D);
      rp.push_back(rstd.data() + j * N);
    }
  }
  void forward() {
    for (int j = 0; j < K; ++j) res_rstd(sp[j], rstd.data() + j * N, N, D, kEps);
    res_mix_forward(sp.data(), rp.data(), K, w.data(), g.data(), x.data(), alpha.data(), N, D);
  }
  // This mixture as a point of res_mix_backward over all its sources.
  ResMixPoint<double> point(const double* dx, double* dw, double* dg) const {
    ResMixPoint<double> p;
    p.alpha = alpha.data();
    p.alpha_stride = K;
    p.x = x.data();
    p.dx = dx;
    p.w = w.data();
    p.g = g.data();
    p.dw = dw;
    p.dg = dg;
    return p;
  }
};

struct MixCase {
  int64_t rows;
  int width, sources;
};

std::string name_of(const MixCase& c) {
  return "N" + std::to_string(c.rows) + "_D" + std::to_string(c.width) + "_K" +
         std::to_string(c.sources);
}

class ResMix : public ::testing::TestWithParam<MixCase> {};

TEST_P(ResMix, ForwardMatchesFormula) {
  const auto [N, D, K] = GetParam();
  Rng rng(1);
  Mix m(N, D, K, rng);
  m.forward();
  double worst = 0;
  for (int64_t n = 0; n < N; ++n) {
    std::vector<double> logit(K);
    double mx = -1e300, sum = 0;
    for (int k = 0; k < K; ++k) {
      const double* s = m.sp[k] + n * D;
      double ss = 0;
      for (int d = 0; d < D; ++d) ss += s[d] * s[d];
      const double r = 1 / std::sqrt(ss / D + kEps);
      EXPECT_NEAR(m.rp[k][n], r, 1e-12 * r);
      double l = 0;
      for (int d = 0; d < D; ++d) l += m.w[d] * (s[d] * r * m.g[d]);  // w · RMSNorm_g(s)
      logit[k] = l;
      mx = std::max(mx, l);
    }
    for (int k = 0; k < K; ++k) sum += std::exp(logit[k] - mx);
    for (int d = 0; d < D; ++d) {
      double ref = 0;
      for (int k = 0; k < K; ++k) {
        const double a = std::exp(logit[k] - mx) / sum;
        if (d == 0) worst = std::max(worst, std::abs(m.alpha[n * K + k] - a));
        ref += a * m.sp[k][n * D + d];
      }
      worst = std::max(worst, std::abs(m.x[n * D + d] - ref));
    }
  }
  EXPECT_LT(worst, 1e-12);
}

TEST_P(ResMix, BackwardMatchesCentralDifferences) {
  const MixCase mc = GetParam();
  const int64_t N = mc.rows;
  const int D = mc.width, K = mc.sources;
  Rng rng(2);
  Mix m(N, D, K, rng);
  // Prior contents: the backward adds.
  const std::vector<double> ds0 = random_normal(rng, K * N * D);  // (K, N, D)
  const std::vector<double> dw0 = random_normal(rng, D), dg0 = random_normal(rng, D);
  std::vector<double> ds, dw, dg;  // as the backward leaves them
  std::vector<double> as, aw, ag;  // what it added
  const auto forward = [&] {
    m.forward();
    return m.x;
  };
  const auto backward = [&](const std::vector<double>& dx) {
    ds = ds0;
    dw = dw0;
    dg = dg0;
    std::vector<double*> dp;
    for (int k = 0; k < K; ++k) dp.push_back(ds.data() + k * N * D);
    const ResMixPoint<double> pt = m.point(dx.data(), dw.data(), dg.data());
    res_mix_backward(m.sp.data(), m.rp.data(), dp.data(), K, &pt, 1, N, D);
    as = added(ds, ds0);
    aw = added(dw, dw0);
    ag = added(dg, dg0);
  };
  // A source row's gradient depends on that row alone, so the rows checked are those where
  // the kernel's loops change: the first rows and both sides of each shard's edge. Every
  // row costs D·K perturbations of an (N, D, K) forward; all 259 rows of N259_D17_K9 took
  // 100 s natively.
  std::vector<KernelTensor> tensors;
  for (int k = 0; k < K; ++k) {
    std::vector<int64_t> checked;
    for (int64_t n = 0; n < N; ++n) {
      if (n < 3 || n % kRowShard == 0 || n % kRowShard == kRowShard - 1 || n == N - 1) {
        for (int d = 0; d < D; ++d) checked.push_back(k * N * D + n * D + d);
      }
    }
    tensors.push_back({"source " + std::to_string(k), &m.src, &as, checked});
  }
  tensors.push_back({"w", &m.w, &aw});
  tensors.push_back({"g", &m.g, &ag});
  check_gradients(
      {.name = name_of(mc), .tensors = tensors, .forward = forward, .backward = backward});
  if (K > 1) {
    EXPECT_GT(testing::norm2(ag), 1e-3) << "the check must see a gain gradient";
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ResMix,
                         // 6 and 9 sources: the forward takes them 4 per pass, so these
                         // cover a second pass and a last pass of 2 and of 1 source. Widths
                         // 32, 64 and 128 run the loops compiled for a known width
                         // (common_width.hpp), the others those for any width.
                         ::testing::Values(MixCase{3, 5, 3}, MixCase{2, 16, 1}, MixCase{1, 1, 4},
                                           MixCase{kRowShard + 20, 4, 3}, MixCase{7, 20, 6},
                                           MixCase{kRowShard + 3, 17, 9}, MixCase{5, 32, 3},
                                           MixCase{3, 64, 6}, MixCase{2, 128, 2}),
                         [](const ::testing::TestParamInfo<MixCase>& info) {
                           return name_of(info.param);
                         });

// Two points sharing three sources, each with one source of its own, as the model runs them:
// the own source of each point in a call of its own, the shared ones in one call for both.
// Every source and parameter gradient of L = Σ c1 ⊙ x1 + Σ c2 ⊙ x2 against central differences.
// Width 6 runs the loops for any width; 32 and 64 the code compiled for a known width, which
// keeps a source row's gradient in registers across the points.
class ResMixShared : public ::testing::TestWithParam<int> {};

TEST_P(ResMixShared, PointsSharingSourcesMatchCentralDifferences) {
  const int64_t N = GetParam() > 16 ? 21 : kRowShard + 9;  // fewer rows where rows are wide
  const int D = GetParam();
  Rng rng(6);
  std::vector<double> src = random_normal(rng, 5 * N * D);  // shared 0..2, own 3 (p1), 4 (p2)
  for (int64_t i = 0; i < 5 * N * D; ++i) src[i] *= 1 + i / (N * D);  // different scales
  const double w_std = 0.8 * std::min(1.0, std::sqrt(16.0 / D));      // as in Mix
  std::vector<double> w1 = random_normal(rng, D, w_std), w2 = random_normal(rng, D, w_std);
  std::vector<double> g1 = random_normal(rng, D, 0.3, 1), g2 = random_normal(rng, D, 0.3, 1);
  std::vector<double> rstd(5 * N), x12(2 * N * D), a1(N * 4), a2(N * 4);  // x12: x1 then x2
  std::vector<double> ds, dw1, dw2, dg1, dg2;
  auto S = [&](int j) { return src.data() + j * N * D; };
  auto R = [&](int j) { return rstd.data() + j * N; };
  const auto forward = [&] {  // (x1, x2), each (N, D)
    for (int j = 0; j < 5; ++j) res_rstd(S(j), R(j), N, D, kEps);
    const double* s1[] = {S(0), S(1), S(2), S(3)};
    const double* r1[] = {R(0), R(1), R(2), R(3)};
    const double* s2[] = {S(0), S(1), S(2), S(4)};
    const double* r2[] = {R(0), R(1), R(2), R(4)};
    res_mix_forward(s1, r1, 4, w1.data(), g1.data(), x12.data(), a1.data(), N, D);
    res_mix_forward(s2, r2, 4, w2.data(), g2.data(), x12.data() + N * D, a2.data(), N, D);
    return x12;
  };
  const auto backward = [&](const std::vector<double>& dx12) {
    ds.assign(5 * N * D, 0.0);
    dw1.assign(D, 0.0);
    dw2.assign(D, 0.0);
    dg1.assign(D, 0.0);
    dg2.assign(D, 0.0);
    auto dS = [&](int j) { return ds.data() + j * N * D; };
    const double* x1 = x12.data();
    const double* x2 = x12.data() + N * D;
    const double* dx1 = dx12.data();
    const double* dx2 = dx12.data() + N * D;
    ResMixPoint<double> p1{a1.data(), 4, 0, x1, dx1, w1.data(), g1.data(), dw1.data(), dg1.data()};
    ResMixPoint<double> p2{a2.data(), 4, 0, x2, dx2, w2.data(), g2.data(), dw2.data(), dg2.data()};
    {  // own sources: column 3 of each point's weights
      ResMixPoint<double> o1 = p1, o2 = p2;
      o1.alpha_col = o2.alpha_col = 3;
      const double* s3[] = {S(3)};
      const double* r3[] = {R(3)};
      double* d3[] = {dS(3)};
      res_mix_backward(s3, r3, d3, 1, &o1, 1, N, D);
      const double* s4[] = {S(4)};
      const double* r4[] = {R(4)};
      double* d4[] = {dS(4)};
      res_mix_backward(s4, r4, d4, 1, &o2, 1, N, D);
    }
    const double* ss[] = {S(0), S(1), S(2)};
    const double* rs[] = {R(0), R(1), R(2)};
    double* dss[] = {dS(0), dS(1), dS(2)};
    const ResMixPoint<double> both[] = {p1, p2};
    res_mix_backward(ss, rs, dss, 3, both, 2, N, D);
  };
  std::vector<KernelTensor> tensors = {
      {"w1", &w1, &dw1}, {"w2", &w2, &dw2}, {"g1", &g1, &dg1}, {"g2", &g2, &dg2}};
  for (int j = 0; j < 5; ++j) {  // source j: (N, D) at j·N·D
    tensors.push_back({"source " + std::to_string(j), &src, &ds, strided_rows(N, D, D, j * N * D)});
  }
  check_gradients({.name = "D" + std::to_string(D),
                   .tensors = tensors,
                   .forward = forward,
                   .backward = backward});
}

INSTANTIATE_TEST_SUITE_P(Widths, ResMixShared, ::testing::Values(6, 32, 64),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "D" + std::to_string(info.param);
                         });

// The model's forward: each source's logits for every point that mixes it (res_logits, in one
// call per source), then each point's softmax and mixture (res_mix_from_logits). The same bits
// as res_mix_forward for each point on its own: float, so that the approximate exponential and
// the 16-row vector paths run; rows beyond a shard and not a multiple of 16, so that the rows
// one by one run too; three points with different queries and different numbers of sources.
class ResMixFromLogits : public ::testing::TestWithParam<int> {};

TEST_P(ResMixFromLogits, SameBitsAsResMixForward) {
  const int D = GetParam();
  const int64_t N = kRowShard + 37;
  constexpr int kSources = 6, kPoints = 3;
  const int sources_of[kPoints] = {6, 2, 5};  // point p mixes sources 0 .. sources_of[p] − 1
  std::mt19937 gen(7);
  std::normal_distribution<float> normal;
  std::vector<float> src(kSources * N * D), rstd(kSources * N);
  for (int64_t i = 0; i < kSources * N * D; ++i) src[i] = normal(gen) * (1 + i / (N * D));
  std::vector<float> w(kPoints * D), g(kPoints * D), q(kPoints * D);
  for (int i = 0; i < kPoints * D; ++i) {
    w[i] = 0.3f * normal(gen);
    g[i] = 1 + 0.3f * normal(gen);
    q[i] = w[i] * g[i];
  }
  std::vector<const float*> sp(kSources), rp(kSources);
  for (int j = 0; j < kSources; ++j) {
    sp[j] = src.data() + j * N * D;
    rp[j] = rstd.data() + j * N;
    res_rstd(sp[j], rstd.data() + j * N, N, D, kEps);
  }
  // logits[p] (K_p, N), filled source by source for the points that mix it
  std::vector<std::vector<float>> logits(kPoints);
  for (int p = 0; p < kPoints; ++p) logits[p].assign(sources_of[p] * N, 0.0f);
  for (int j = 0; j < kSources; ++j) {
    std::vector<const float*> qs;
    std::vector<float*> out;
    for (int p = 0; p < kPoints; ++p) {
      if (j >= sources_of[p]) continue;
      qs.push_back(q.data() + p * D);
      out.push_back(logits[p].data() + j * N);
    }
    res_logits(sp[j], rp[j], qs.data(), out.data(), static_cast<int>(qs.size()), N, D);
  }
  for (int p = 0; p < kPoints; ++p) {
    const int K = sources_of[p];
    std::vector<float> x_ref(N * D), a_ref(N * K), x(N * D), a(N * K);
    res_mix_forward(sp.data(), rp.data(), K, w.data() + p * D, g.data() + p * D, x_ref.data(),
                    a_ref.data(), N, D);
    res_mix_from_logits(sp.data(), K, logits[p].data(), x.data(), a.data(), N, D);
    EXPECT_EQ(std::memcmp(x.data(), x_ref.data(), x.size() * sizeof(float)), 0) << "x, point " << p;
    EXPECT_EQ(std::memcmp(a.data(), a_ref.data(), a.size() * sizeof(float)), 0) << "α, point " << p;
  }
}

// 20: the loops for any width; 32 and 64: those compiled for a known width.
INSTANTIATE_TEST_SUITE_P(Widths, ResMixFromLogits, ::testing::Values(20, 32, 64),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "D" + std::to_string(info.param);
                         });

// A zero query gives uniform weights whatever the sources: x is their mean.
TEST(ResMixSpecial, ZeroQueryIsTheMean) {
  Rng rng(3);
  Mix m(4, 6, 3, rng);
  std::fill(m.w.begin(), m.w.end(), 0.0);
  m.forward();
  for (int64_t n = 0; n < m.N; ++n) {
    for (int k = 0; k < m.K; ++k) EXPECT_DOUBLE_EQ(m.alpha[n * m.K + k], 1.0 / 3);
    for (int d = 0; d < m.D; ++d) {
      const double mean = (m.sp[0][n * m.D + d] + m.sp[1][n * m.D + d] + m.sp[2][n * m.D + d]) / 3;
      EXPECT_NEAR(m.x[n * m.D + d], mean, 1e-14);
    }
  }
}

// One source: α = 1, x = s exactly, the source gets dx unchanged and the parameters nothing.
TEST(ResMixSpecial, OneSourceIsTheIdentity) {
  Rng rng(4);
  Mix m(5, 7, 1, rng);
  m.forward();
  EXPECT_EQ(m.x, m.src);
  const std::vector<double> dx = random_normal(rng, m.N * m.D);
  std::vector<double> ds(m.N * m.D, 0.0), dw(m.D, 0.0), dg(m.D, 0.0);
  double* dp = ds.data();
  const ResMixPoint<double> pt = m.point(dx.data(), dw.data(), dg.data());
  res_mix_backward(m.sp.data(), m.rp.data(), &dp, 1, &pt, 1, m.N, m.D);
  EXPECT_EQ(ds, dx);
  EXPECT_EQ(dw, std::vector<double>(m.D, 0.0));
  EXPECT_EQ(dg, std::vector<double>(m.D, 0.0));
}

}  // namespace
}  // namespace normlab
