// The dilution probe (docs/probes.md, dilution): the gap against a direct computation from the
// training forward's logits and accessors, and hand-built constant-attention models on
// set_complement whose gaps are known in closed form.
#include "normlab/probes/dilution_probe.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "normlab/base/errors.hpp"
#include "normlab/base/rng.hpp"

namespace normlab {
namespace {

std::unique_ptr<Task> set_complement(int v) {
  return make_task_from_json({{"name", "set_complement"}, {"v", v}});
}

const DilutionRow& row_of(const DilutionResult& r, int64_t s, DilutionSite site) {
  for (const DilutionRow& row : r.rows) {
    if (row.s == s && row.site == site) return row;
  }
  throw std::runtime_error("no row for s = " + std::to_string(s) + " " + to_string(site));
}

const LineFit& fit_of(const DilutionResult& r, DilutionSite site) {
  for (const DilutionFit& f : r.fits) {
    if (f.site == site) return f.fit;
  }
  throw std::runtime_error("no fit for " + to_string(site));
}

// mean_{j∉P} ℓ_j − mean_{j∈P} ℓ_j over the elements 1..v, written out again here.
double direct_gap(const std::vector<double>& logit, const int32_t* elements, int64_t s, int v) {
  std::vector<bool> present(v + 1, false);
  for (int64_t j = 0; j < s; ++j) present[elements[j]] = true;
  double a = 0, p = 0;
  for (int j = 1; j <= v; ++j) (present[j] ? p : a) += logit[j];
  return a / (v - s) - p / s;
}

// A fresh peri model (it has an output norm, so all three sites): every size's mean gap and
// interval equal those recomputed from the training forward (Model::forward, not the streaming
// forward_rows the probe uses) on the same sequences.
TEST(DilutionProbe, GapEqualsDirectComputationFromTheModelsLogits) {
  const int v = 6;
  auto task = set_complement(v);
  ModelConfig c;
  c.vocab = task->vocab();
  c.width = 8;
  c.heads = 2;
  c.layers = 1;
  c.mlp = false;
  c.scheme = Scheme::peri;
  c.final_norm = Toggle::off;
  c.init_std = 0.5;  // logits of order one: gaps well away from zero
  Model<float> m(c);
  m.init(5);
  DilutionConfig dc;
  dc.sizes = {5, 1, 3};  // sorted by the probe
  dc.samples = 24;
  const DilutionResult r = run_dilution_probe(m, *task, dc);
  ASSERT_EQ(r.rows.size(), 3u * 3u);
  EXPECT_EQ(r.norm_after, "rmsnorm");

  const int V = c.vocab, D = c.width;
  const float* U = m.params().data() + m.layout().find("unembed.weight")->offset;
  for (int64_t s : {1, 3, 5}) {
    Rng rng(dc.seed ^ (static_cast<uint64_t>(s) * 0x9e3779b97f4a7c15ULL));
    const Batch batch = task->make_batch(s, dc.samples, rng);
    const int64_t T = s + 1;
    const float* logits = m.forward(batch.tokens.data(), dc.samples, T);
    std::vector<std::vector<double>> gaps(3);
    for (int64_t b = 0; b < dc.samples; ++b) {
      const int64_t row = b * T + s;  // the query position
      ASSERT_EQ(batch.tokens[row], 0);
      std::vector<double> l(V), ly(V), lz(V);
      for (int j = 0; j < V; ++j) {
        l[j] = logits[row * V + j];
        for (int d = 0; d < D; ++d) {
          ly[j] += double(U[j * D + d]) * m.branch_output(0)[row * D + d];
          lz[j] += double(U[j * D + d]) * m.branch_output_normed(0)[row * D + d];
        }
      }
      gaps[0].push_back(direct_gap(l, &batch.tokens[b * T], s, v));
      gaps[1].push_back(direct_gap(ly, &batch.tokens[b * T], s, v));
      gaps[2].push_back(direct_gap(lz, &batch.tokens[b * T], s, v));
    }
    const DilutionSite sites[] = {DilutionSite::logits, DilutionSite::branch,
                                  DilutionSite::branch_normed};
    for (int k = 0; k < 3; ++k) {
      const std::vector<double>& g = gaps[k];
      const double n = static_cast<double>(g.size());
      const double mean = std::accumulate(g.begin(), g.end(), 0.0) / n;
      double ss = 0;
      for (double x : g) ss += (x - mean) * (x - mean);
      const double half = student_t_quantile(0.975, n - 1) * std::sqrt(ss / (n - 1)) / std::sqrt(n);
      const DilutionRow& row = row_of(r, s, sites[k]);
      SCOPED_TRACE("s = " + std::to_string(s) + ", " + to_string(sites[k]));
      EXPECT_GT(std::abs(mean), 1e-3);
      EXPECT_NEAR(row.gap, mean, 1e-5 * (1 + std::abs(mean)));
      EXPECT_NEAR(row.gap_low, mean - half, 1e-5 * (1 + std::abs(mean)));
      EXPECT_NEAR(row.gap_high, mean + half, 1e-5 * (1 + std::abs(mean)));
      EXPECT_EQ(row.samples, dc.samples);
    }
  }
  // No final norm, and peri adds z = N_out(y) to the query token's embedding x: the final
  // logits are U·x + U·z, and U·x is the same for every input, but its gap is not zero (x's
  // logits differ across elements), so the sites differ.
  EXPECT_NE(row_of(r, 3, DilutionSite::logits).gap, row_of(r, 3, DilutionSite::branch_normed).gap);
}

// A one-layer, attention-only model on set_complement(v) with hand-set weights (D = v + 2
// features: feature t for token t = 0..v, feature v + 1 spare; one head, no positions):
//   embedding   E_t = e_t, so u_t = N_in(E_t) = sqrt(D) e_t (RMSNorm, unit gain, eps 1e-12)
//   values      element e: W_v u_e = −c e_e; query token: W_v u_0 = (c/2) Σ_{e=1..v} e_e + r
//   e_{v+1} output      W_o = identity;  unembedding U_e = e_e for the elements, U_0 = 0 attention
//   mask_query: W_q u_0 = a sqrt(D) e_0 and W_k u_0 = −a sqrt(D) e_0 with a = 10, so
//               the query's score on itself is −a² sqrt(D) ≈ −300 (exp underflows to 0) and 0
//               on every element: weight exactly 1/s on each of the s elements.
//               Otherwise q = k = 0: weight 1/(s + 1) on every position, the query included.
// With mask_query, at the query y = −(c/s) 1_P: U·y is −c/s on present elements, 0 on absent
// ones, so gap(U·y) = c/s exactly (slope −1). Without it, y = (1/(s+1)) (±c/2 on absent /
// present elements, r on the spare feature), whose norm ‖y‖ = sqrt(v c²/4 + r²)/(s + 1) is
// the same for every input; gap(U·y) = c/(s + 1), and an RMSNorm output norm divides y by
// ‖y‖/sqrt(D): gap(U·N_out(y)) = c sqrt(D) / sqrt(v c²/4 + r²), constant in s.
constexpr double kC = 2.0, kR = 1.0;

Model<float>* constant_attention_model(int v, Scheme scheme, bool mask_query) {
  ModelConfig c;
  c.vocab = v + 1;
  c.width = v + 2;
  c.heads = 1;
  c.layers = 1;
  c.mlp = false;
  c.scheme = scheme;
  c.norm = NormKind::rmsnorm;
  c.norm_eps = 1e-12;
  c.final_norm = Toggle::off;
  c.embed_norm = Toggle::off;
  auto* m = new Model<float>(c);
  const int D = c.width, V = c.vocab;
  const float sd = static_cast<float>(std::sqrt(double(D)));
  std::vector<float>& p = m->params();
  std::fill(p.begin(), p.end(), 0.0f);
  for (const TensorSpec& t : m->layout().tensors()) {
    if (t.name.find("norm") != std::string::npos && t.name.ends_with(".weight")) {
      std::fill_n(p.begin() + t.offset, t.size, 1.0f);  // unit gains
    }
  }
  auto at = [&](const std::string& name, int row, int col) -> float& {
    const TensorSpec* t = m->layout().find(name);
    if (t == nullptr) throw std::runtime_error("no tensor " + name);
    return p[t->offset + row * t->shape[1] + col];
  };
  for (int t = 0; t < V; ++t) at("embed.weight", t, t) = 1.0f;
  if (mask_query) {
    at("layers.0.attn.q.weight", 0, 0) = 10.0f;
    at("layers.0.attn.k.weight", 0, 0) = -10.0f;
  }
  for (int e = 1; e <= v; ++e) {
    at("layers.0.attn.v.weight", e, e) = static_cast<float>(-kC / sd);
    at("layers.0.attn.v.weight", e, 0) = static_cast<float>(kC / 2 / sd);
    at("unembed.weight", e, e) = 1.0f;
  }
  at("layers.0.attn.v.weight", v + 1, 0) = static_cast<float>(kR / sd);
  for (int d = 0; d < D; ++d) at("layers.0.attn.o.weight", d, d) = 1.0f;
  return m;
}

TEST(DilutionProbe, ConstantAttentionOverTheElementsDilutesTheBranchGapAsOneOverS) {
  const int v = 8;
  auto task = set_complement(v);
  for (Scheme scheme : {Scheme::pre, Scheme::peri}) {
    SCOPED_TRACE(to_string(scheme));
    std::unique_ptr<Model<float>> m(constant_attention_model(v, scheme, true));
    DilutionConfig dc;
    dc.samples = 16;
    const DilutionResult r = run_dilution_probe(*m, *task, dc);
    for (int64_t s = 1; s < v; ++s) {
      EXPECT_NEAR(row_of(r, s, DilutionSite::branch).gap, kC / s, 1e-6 * kC / s) << s;
    }
    const LineFit& f = fit_of(r, DilutionSite::branch);
    EXPECT_EQ(f.points, v - 1);
    EXPECT_NEAR(f.slope, -1.0, 1e-6);
    if (scheme == Scheme::pre) {
      // pre without a final norm: logits = U(x + y), and U·x = U·e_0 = 0 on the elements.
      EXPECT_NEAR(fit_of(r, DilutionSite::logits).slope, -1.0, 1e-6);
      EXPECT_EQ(r.fits.size(), 2u);  // no output norm, no branch_normed site
    } else {
      // y = −(c/s) 1_P has RMS c/sqrt(s·D): the norm leaves sqrt(D/s) on P, slope −1/2.
      EXPECT_NEAR(fit_of(r, DilutionSite::branch_normed).slope, -0.5, 1e-6);
      EXPECT_NEAR(row_of(r, 4, DilutionSite::branch_normed).gap, std::sqrt((v + 2) / 4.0), 1e-5);
    }
  }
}

TEST(DilutionProbe, OutputNormUndoesTheDilutionWhenTheOutputNormIsConstant) {
  const int v = 8;
  auto task = set_complement(v);
  std::unique_ptr<Model<float>> m(constant_attention_model(v, Scheme::peri, false));
  DilutionConfig dc;
  dc.samples = 16;
  const DilutionResult r = run_dilution_probe(*m, *task, dc);
  const double D = v + 2;
  const double normed = kC * std::sqrt(D) / std::sqrt(v * kC * kC / 4 + kR * kR);
  for (int64_t s = 1; s < v; ++s) {
    // Attention over s + 1 positions: the branch gap is c/(s + 1); after the norm, constant.
    EXPECT_NEAR(row_of(r, s, DilutionSite::branch).gap, kC / (s + 1), 1e-6 * kC / (s + 1)) << s;
    EXPECT_NEAR(row_of(r, s, DilutionSite::branch_normed).gap, normed, 1e-6 * normed) << s;
    EXPECT_NEAR(row_of(r, s, DilutionSite::logits).gap, normed, 1e-6 * normed) << s;
  }
  EXPECT_NEAR(fit_of(r, DilutionSite::branch_normed).slope, 0.0, 1e-6);
  EXPECT_LT(fit_of(r, DilutionSite::branch).slope, -0.6);
}

TEST(DilutionProbe, RefusesOtherTasksAndBadSizes) {
  ModelConfig c;
  c.vocab = 65;
  c.width = 8;
  c.layers = 1;
  auto other = make_task_from_json({{"name", "max_retrieval"}});
  DilutionConfig dc;
  try {
    validate_dilution(c, *other, dc);
    FAIL() << "max_retrieval accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("needs a set_complement model"), std::string::npos)
        << e.what();
  }
  auto task = set_complement(6);
  c.vocab = task->vocab();
  dc.sizes = {2, 6};
  EXPECT_THROW(validate_dilution(c, *task, dc), UsageError);  // s = v leaves nothing absent
  dc.sizes = {2, 2};
  EXPECT_THROW(validate_dilution(c, *task, dc), UsageError);
  dc.sizes = {};
  validate_dilution(c, *task, dc);
  EXPECT_EQ(dc.sizes, (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace normlab
