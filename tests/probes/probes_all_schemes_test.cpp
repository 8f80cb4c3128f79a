// Every probe runs on a fresh model of every scheme without error and with finite numbers
// (NaN only where documented: no output norm, the final stream position), on random tokens
// and on a task's inputs (two token fields; dyck scores every position).
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <string>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/probes/depth_probe.hpp"
#include "normlab/probes/dilution_probe.hpp"
#include "normlab/probes/dispersion_probe.hpp"
#include "normlab/probes/variance_probe.hpp"

namespace normlab {
namespace {

// Null when the scheme is not implemented yet (the model constructor says so).
std::unique_ptr<Model<float>> fresh(const ModelConfig& c) {
  try {
    auto m = std::make_unique<Model<float>>(c);
    m->init(1);
    // ReZero's branch factors start at 0, where every sublayer is the identity and the
    // stream's statistics do not depend on the length at all (a zero spread, whose log-log
    // fit is undefined): probe it as after some training, with factors of 0.5.
    for (const TensorSpec& t : m->layout().tensors()) {
      if (!t.name.ends_with("branch_scale")) continue;
      std::fill_n(m->params().data() + t.offset, t.size, 0.5f);
    }
    return m;
  } catch (const UsageError& e) {
    if (std::string(e.what()).find("not implemented") != std::string::npos) return nullptr;
    throw;
  }
}

void expect_finite(double v, const std::string& what) {
  EXPECT_TRUE(std::isfinite(v)) << what << " = " << v;
}

void check_all(Model<float>& m, const ProbeInput& input, const std::vector<int64_t>& lengths,
               int64_t depth_length) {
  const ModelConfig& c = m.config();
  VarianceConfig vc;
  vc.sweep.lengths = lengths;
  vc.sweep.samples = 6;
  vc.sweep.query_rows = 2;
  const VarianceResult v = run_variance_probe(m, input, vc);
  ASSERT_EQ(v.lengths.size(), lengths.size());
  for (const VarianceRow& row : v.rows) {
    const std::string what =
        fmt::format("variance {} layer {} N {}", to_string(row.site), row.layer, row.length);
    expect_finite(row.stats.mean_feature_std, what);
    expect_finite(row.stats.global_mean, what);
    expect_finite(row.stats.global_var, what);
    // 6 sequences, the last 2 (scored) positions of each: argmax_retrieval scores one, a
    // random sequence of length 1 has one.
    EXPECT_GE(row.stats.rows, 6) << what;
    EXPECT_LE(row.stats.rows, 12) << what;
  }
  for (const VarianceFit& f : v.fits) expect_finite(f.fit.slope, "slope " + to_string(f.site));
  const bool normed = v.norm_after != "none";
  for (const VarianceHistogram& h : v.histograms) {
    EXPECT_TRUE(h.site == VarianceSite::attn_out || normed);
    for (int64_t n : h.values) EXPECT_GT(n, 0);
  }
  EXPECT_NO_THROW(nlohmann::json(variance_json(v)).dump());

  const DispersionResult d = run_dispersion_probe(m, input, vc.sweep);
  EXPECT_EQ(d.rows.size(), lengths.size() * c.layers * c.heads);
  for (const DispersionRow& row : d.rows) {
    const std::string what =
        fmt::format("dispersion layer {} head {} N {}", row.layer, row.head, row.length);
    expect_finite(row.max_weight_mean, what);
    expect_finite(row.entropy_mean, what);
    EXPECT_GT(row.max_weight_mean, 0) << what;
    EXPECT_LE(row.max_weight_mean, 1 + 1e-12) << what;
    EXPECT_GE(row.entropy_mean, 0) << what;
    EXPECT_LE(row.entropy_mean, row.uniform_entropy + 1e-9) << what;
  }

  Rng rng(2);
  const Batch batch = input.make_batch(depth_length, 3, rng, true);
  const DepthResult r = run_depth_probe(m, batch);
  expect_finite(r.loss, "loss");
  expect_finite(r.grad_norm, "grad norm");
  EXPECT_GT(r.grad_norm, 0);
  for (const DepthPosition& p : r.positions) {
    const std::string what = fmt::format("depth position {}", p.position);
    expect_finite(p.hidden_rms, what);
    expect_finite(p.cosine, what);
    expect_finite(p.erank, what);
    if (p.kind != "final") {
      expect_finite(p.branch_rms, what);
      expect_finite(p.grad_norm, what);
      EXPECT_EQ(std::isfinite(p.branch_normed_rms), m.scheme().sublayers[p.position].norm_out)
          << what;
    }
  }
  for (const DepthTensor& t : r.tensors) expect_finite(t.grad_norm, t.name);
}

class EveryScheme : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryScheme, ProbesRunOnRandomTokens) {
  const Scheme scheme = parse_scheme(GetParam());
  std::vector<NormKind> norms = {NormKind::rmsnorm, NormKind::layernorm, NormKind::standardize};
  if (scheme == Scheme::ngpt) norms = {NormKind::l2};
  if (scheme == Scheme::pre) norms.push_back(NormKind::none);
  for (NormKind norm : norms) {
    SCOPED_TRACE(to_string(norm));
    ModelConfig c;
    c.vocab = 10;
    c.width = 16;
    c.heads = 2;
    c.layers = 2;
    c.scheme = scheme;
    c.norm = norm;
    auto m = fresh(c);
    if (!m) GTEST_SKIP() << GetParam() << " is not implemented";
    check_all(*m, ProbeInput::random(c.vocab), {1, 2, 8, 33}, 12);
  }
}

TEST_P(EveryScheme, ProbesRunOnTaskInputs) {
  for (const char* name : {"argmax_retrieval", "dyck"}) {
    SCOPED_TRACE(name);
    auto task = make_task_from_json({{"name", name}});
    ModelConfig c;
    c.vocab = task->vocab();
    c.width = 16;
    c.heads = 2;
    c.layers = 1;
    c.scheme = parse_scheme(GetParam());
    c.norm = c.scheme == Scheme::ngpt ? NormKind::l2 : NormKind::layernorm;
    c.pos = PosEncoding::rope;
    auto m = fresh(c);
    if (!m) GTEST_SKIP() << GetParam() << " is not implemented";
    check_all(*m, ProbeInput::from_task(*task), {2, 4, 8}, 6);
  }
}

// The dilution probe on a two-layer model with MLPs (the branch sites read the last attention
// sublayer, 2): finite gaps at every size, and branch_normed exactly when that sublayer has an
// output norm.
TEST_P(EveryScheme, DilutionRunsOnSetComplement) {
  auto task = make_task_from_json({{"name", "set_complement"}, {"v", 6}});
  ModelConfig c;
  c.vocab = task->vocab();
  c.width = 16;
  c.heads = 2;
  c.layers = 2;
  c.scheme = parse_scheme(GetParam());
  c.norm = c.scheme == Scheme::ngpt ? NormKind::l2 : NormKind::rmsnorm;
  auto m = fresh(c);
  if (!m) GTEST_SKIP() << GetParam() << " is not implemented";
  DilutionConfig dc;
  dc.samples = 6;
  const DilutionResult r = run_dilution_probe(*m, *task, dc);
  EXPECT_EQ(r.attention_sublayer, 2);
  const bool normed = m->scheme().sublayers[2].norm_out;
  EXPECT_EQ(r.fits.size(), normed ? 3u : 2u);
  EXPECT_EQ(r.rows.size(), r.fits.size() * 5);  // s = 1 .. 5
  for (const DilutionRow& row : r.rows) {
    expect_finite(row.gap, fmt::format("dilution {} s {}", to_string(row.site), row.s));
    expect_finite(row.gap_low, "gap_low");
  }
}

INSTANTIATE_TEST_SUITE_P(Probes, EveryScheme, ::testing::ValuesIn(scheme_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace normlab
