// The variance probe: on i.i.d. random tokens, a fresh one-layer model's attention is
// near-uniform, so the attention output at the last position is close to the mean of N
// i.i.d. value vectors and its per-feature std falls as N^(−1/2) (docs/reference.md §5).
#include "normlab/probes/variance_probe.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "normlab/base/errors.hpp"

namespace normlab {
namespace {

std::vector<int64_t> powers_of_two(int from, int to) {
  std::vector<int64_t> v;
  for (int k = from; k <= to; ++k) v.push_back(int64_t{1} << k);
  return v;
}

const VarianceFit& find_fit(const VarianceResult& r, int layer, VarianceSite site, int head = -1) {
  for (const VarianceFit& f : r.fits) {
    if (f.layer == layer && f.site == site && f.head == head) return f;
  }
  throw std::runtime_error("no fit for layer " + std::to_string(layer) + " " + to_string(site));
}

struct SlopeCase {
  Scheme scheme;
  NormKind norm;
};

class VarianceSlope : public ::testing::TestWithParam<SlopeCase> {};

TEST_P(VarianceSlope, FreshOneLayerModelOnRandomTokensFallsAsInverseSqrtN) {
  ModelConfig c;
  c.vocab = 16;
  c.width = 32;
  c.heads = 2;
  c.layers = 1;
  c.scheme = GetParam().scheme;
  c.norm = GetParam().norm;
  c.beta = 0.1;  // logits ~ 1e-6: uniform attention to ~1e-6
  Model<float> m(c);
  m.init(11);
  VarianceConfig vc;
  vc.sweep.lengths = powers_of_two(1, 10);
  vc.sweep.samples = 512;
  const VarianceResult r = run_variance_probe(m, ProbeInput::random(c.vocab), vc);
  const LineFit& f = find_fit(r, 0, VarianceSite::attn_out).fit;
  std::printf("  %s: slope %.4f [%.4f, %.4f], r2 %.5f\n", to_string(c.scheme).c_str(), f.slope,
              f.slope_ci_low, f.slope_ci_high, f.r2);
  EXPECT_EQ(f.points, 10);
  // Tolerance: the slope's standard error here is about 0.0025 (512 sequences per length,
  // 10 lengths), so 0.03 is over ten of them; the mistakes it must catch are far outside it:
  // pooling every position of a causal sequence gives about −0.4, variance instead of std −1.
  EXPECT_NEAR(f.slope, -0.5, 0.03);
  EXPECT_LE(f.slope_ci_low, -0.5);
  EXPECT_GE(f.slope_ci_high, -0.5);
  EXPECT_GT(f.r2, 0.99);
  for (int h = 0; h < c.heads; ++h) {
    EXPECT_NEAR(find_fit(r, 0, VarianceSite::head, h).fit.slope, -0.5, 0.03) << "head " << h;
  }
}

// The first attention of a two-layer model (computed at every row, not only the measured
// ones) and a bidirectional model measured at its last four positions give the same slope.
TEST(VarianceProbe, EarlierLayerAndBidirectionalModelAlsoFallAsInverseSqrtN) {
  for (bool causal : {true, false}) {
    ModelConfig c;
    c.vocab = 16;
    c.width = 32;
    c.layers = 2;
    c.causal = causal;
    c.beta = 0.1;
    Model<float> m(c);
    m.init(12);
    VarianceConfig vc;
    vc.sweep.lengths = powers_of_two(2, 8);
    vc.sweep.samples = 512;
    vc.sweep.query_rows = causal ? 1 : 4;
    const VarianceResult r = run_variance_probe(m, ProbeInput::random(c.vocab), vc);
    const LineFit& f = find_fit(r, 0, VarianceSite::attn_out).fit;
    std::printf("  causal %d layer 0: slope %.4f [%.4f, %.4f]\n", causal, f.slope, f.slope_ci_low,
                f.slope_ci_high);
    EXPECT_NEAR(f.slope, -0.5, 0.03) << "causal " << causal;
    EXPECT_EQ(r.rows.front().stats.rows, 512 * vc.sweep.query_rows);
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, VarianceSlope,
                         ::testing::Values(SlopeCase{Scheme::pre, NormKind::rmsnorm},
                                           SlopeCase{Scheme::post_attn, NormKind::layernorm},
                                           SlopeCase{Scheme::peri, NormKind::rmsnorm}));

}  // namespace
}  // namespace normlab
