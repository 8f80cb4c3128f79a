// AttnRes and Block AttnRes in the model (docs/reference.md §4, docs/attnres.md): the resolved plan
// of sources, the parameter layout, what the forward records (uniform weights at init, block
// partial sums, the final mixture), and block_size = 1 being attnres exactly. Gradients are
// checked by model_gradcheck_test.cpp, the PyTorch twin by twin_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

using Sources = std::vector<std::vector<int>>;

ModelConfig attnres_config(Scheme scheme, int layers, bool mlp, int block_size = 2) {
  ModelConfig c = testing::small_model_config(scheme);
  c.layers = layers;
  c.mlp = mlp;
  c.block_size = block_size;
  return c;
}

TEST(AttnResPlan, FullAttnResAttendsOverEveryEarlierOutput) {
  const ResolvedScheme r = resolve_scheme(attnres_config(Scheme::attnres, 2, true));
  EXPECT_EQ(r.residual_mode, ResidualMode::attnres);
  EXPECT_EQ(r.res_block, 1);
  EXPECT_EQ(r.res_sources, (Sources{{0}, {0, 1}, {0, 1, 2}, {0, 1, 2, 3}, {0, 1, 2, 3, 4}}));
  EXPECT_EQ(r.res_continues, std::vector<bool>(4, false));
  EXPECT_EQ(r.res_source_block, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(r.res_blocks, 5);
  for (const SublayerSlots& s : r.sublayers) EXPECT_TRUE(s.norm_in && !s.norm_out && !s.norm_post);
}

TEST(AttnResPlan, BlocksOfTwo) {
  // S = 6 sublayers in blocks {0,1} {2,3} {4,5}: records 2, 4, 6 end blocks; records 1, 3, 5
  // are partial sums, seen only by the next sublayer.
  const ResolvedScheme r = resolve_scheme(attnres_config(Scheme::block_attnres, 3, true, 2));
  EXPECT_EQ(r.residual_mode, ResidualMode::block_attnres);
  EXPECT_EQ(r.res_sources,
            (Sources{{0}, {0, 1}, {0, 2}, {0, 2, 3}, {0, 2, 4}, {0, 2, 4, 5}, {0, 2, 4, 6}}));
  EXPECT_EQ(r.res_continues, (std::vector<bool>{false, true, false, true, false, true}));
  EXPECT_EQ(r.res_source_block, (std::vector<int>{0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(r.res_blocks, 4);
}

TEST(AttnResPlan, BlocksOfFourWithAPartialLastBlock) {
  // S = 6 in blocks {0..3} {4,5}: the final mixture sees the unfinished second block.
  const ResolvedScheme r = resolve_scheme(attnres_config(Scheme::block_attnres, 3, true, 4));
  EXPECT_EQ(r.res_sources, (Sources{{0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 4, 5}, {0, 4, 6}}));
  EXPECT_EQ(r.res_continues, (std::vector<bool>{false, true, true, true, false, true}));
  EXPECT_EQ(r.res_blocks, 3);
}

TEST(AttnResPlan, BlockLargerThanTheModelIsOneRunningSum) {
  const ResolvedScheme r = resolve_scheme(attnres_config(Scheme::block_attnres, 3, false, 8));
  EXPECT_EQ(r.res_sources, (Sources{{0}, {0, 1}, {0, 2}, {0, 3}}));
  EXPECT_EQ(r.res_blocks, 2);
}

TEST(AttnResPlan, AdditiveSchemesHaveNone) {
  const ResolvedScheme r = resolve_scheme(attnres_config(Scheme::pre, 2, true));
  EXPECT_EQ(r.residual_mode, ResidualMode::additive);
  EXPECT_TRUE(r.res_sources.empty());
  Model<float> m(attnres_config(Scheme::pre, 2, true));
  EXPECT_THROW(m.res_weights(0), std::logic_error);
  EXPECT_THROW(m.res_source(0), std::logic_error);
  EXPECT_EQ(m.layout().find("final_res.query"), nullptr);
}

TEST(AttnResLayout, OneQueryAndKeyNormPerMixingPoint) {
  Model<float> m(attnres_config(Scheme::block_attnres, 2, true, 2));
  const int64_t D = 8;
  for (const std::string prefix :
       {"layers.0.attn.", "layers.0.mlp.", "layers.1.attn.", "layers.1.mlp.", "final_res."}) {
    const bool final = prefix == "final_res.";
    const TensorSpec* q = m.layout().find(prefix + (final ? "query" : "res_query"));
    const TensorSpec* g = m.layout().find(prefix + (final ? "norm.weight" : "res_norm.weight"));
    ASSERT_NE(q, nullptr) << prefix;
    ASSERT_NE(g, nullptr) << prefix;
    EXPECT_EQ(q->shape, std::vector<int64_t>{D});
    EXPECT_EQ(g->shape, std::vector<int64_t>{D});
    EXPECT_FALSE(q->decay);
    EXPECT_FALSE(g->decay);
    EXPECT_EQ(q->init, InitKind::constant);
    EXPECT_EQ(q->init_value, 0.0);
    EXPECT_EQ(g->init_value, 1.0);
  }
  // The sublayer's own pre-norm is still there; no post-norm; the final norm stays.
  EXPECT_NE(m.layout().find("layers.1.mlp.norm_in.weight"), nullptr);
  EXPECT_EQ(m.layout().find("layers.1.mlp.norm_post.weight"), nullptr);
  EXPECT_NE(m.layout().find("final_norm.weight"), nullptr);
  EXPECT_EQ(m.res_query_offset(4), m.layout().find("final_res.query")->offset);
  EXPECT_EQ(m.res_gain_offset(1), m.layout().find("layers.0.mlp.res_norm.weight")->offset);
}

std::vector<int32_t> random_tokens(int64_t n, int vocab, uint64_t seed) {
  Rng rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = static_cast<int32_t>(rng.below(vocab));
  return t;
}

// At init every query is zero: every mixing point weighs its sources uniformly, so its stream
// is their mean; each record is z, or under blocks the partial sum + z.
TEST(AttnResForward, ZeroQueriesGiveUniformWeights) {
  for (int block : {1, 2, 3}) {
    SCOPED_TRACE("block size " + std::to_string(block));
    const ModelConfig c = attnres_config(Scheme::block_attnres, 3, true, block);
    Model<double> m(c);
    m.init(2);
    const int64_t B = 2, T = 5, N = B * T, D = c.width;
    const std::vector<int32_t> tokens = random_tokens(N, c.vocab, 3);
    m.forward(tokens.data(), B, T);
    const ResolvedScheme& r = m.scheme();
    const int S = m.num_sublayers();
    for (int l = 0; l <= S; ++l) {
      const std::vector<int>& ids = r.res_sources[l];
      const int K = static_cast<int>(ids.size());
      const double* a = m.res_weights(l);
      const double* x = m.stream(l);
      for (int64_t n = 0; n < N; ++n) {
        for (int k = 0; k < K; ++k) EXPECT_NEAR(a[n * K + k], 1.0 / K, 1e-15) << "point " << l;
        for (int64_t d = 0; d < D; ++d) {
          double mean = 0;
          for (int id : ids) mean += m.res_source(id)[n * D + d];
          EXPECT_NEAR(x[n * D + d], mean / K, 1e-14) << "point " << l;
        }
      }
    }
    for (int j = 0; j < S; ++j) {
      const double* rec = m.res_source(j + 1);
      const double* z = m.branch_output_normed(j);
      const double* prev = m.res_source(j);
      for (int64_t k = 0; k < N * D; ++k) {
        const double expected = r.res_continues[j] ? prev[k] + z[k] : z[k];
        EXPECT_EQ(rec[k], expected) << "record " << j + 1;
      }
      const double* rstd = m.res_source_rstd(j + 1);
      for (int64_t n = 0; n < N; ++n) {
        double ss = 0;
        for (int64_t d = 0; d < D; ++d) ss += rec[n * D + d] * rec[n * D + d];
        EXPECT_NEAR(rstd[n], 1 / std::sqrt(ss / D + c.norm_eps), 1e-12 * rstd[n]);
      }
    }
  }
}

void randomize_res_params(Model<float>& m, uint64_t seed) {
  Rng rng(seed);
  for (const TensorSpec& t : m.layout().tensors()) {
    const bool query = t.name.ends_with("res_query") || t.name == "final_res.query";
    const bool gain = t.name.ends_with("res_norm.weight");
    if (!query && !gain) continue;
    for (int64_t i = t.offset; i < t.offset + t.size; ++i) {
      m.params()[i] = static_cast<float>(query ? 0.7 * rng.normal() : 1.0 + 0.3 * rng.normal());
    }
  }
}

bool same_bits(const float* a, const float* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

// block_attnres(1) is attnres: the same parameter names and the same logits and gradients,
// bit for bit, with queries far from zero.
TEST(AttnResForward, BlockSizeOneIsAttnRes) {
  for (bool mlp : {true, false}) {
    SCOPED_TRACE(mlp ? "with MLP" : "attention only");
    Model<float> full(attnres_config(Scheme::attnres, 3, mlp));
    Model<float> blocks(attnres_config(Scheme::block_attnres, 3, mlp, 1));
    ASSERT_EQ(full.layout().tensors().size(), blocks.layout().tensors().size());
    for (size_t t = 0; t < full.layout().tensors().size(); ++t) {
      EXPECT_EQ(full.layout().tensors()[t].name, blocks.layout().tensors()[t].name);
    }
    full.init(5);
    randomize_res_params(full, 6);
    blocks.params() = full.params();
    const int64_t B = 3, T = 7, N = B * T, V = 9;
    const std::vector<int32_t> tokens = random_tokens(N, V, 7);
    Rng rng(8);
    std::vector<float> dlogits(N * V);
    for (auto& d : dlogits) d = static_cast<float>(rng.normal());
    const float* a = full.forward(tokens.data(), B, T);
    const std::vector<float> la(a, a + N * V);
    const float* b = blocks.forward(tokens.data(), B, T);
    EXPECT_TRUE(same_bits(la.data(), b, N * V)) << "logits";
    full.zero_grads();
    full.backward(dlogits.data());
    blocks.zero_grads();
    blocks.backward(dlogits.data());
    EXPECT_TRUE(same_bits(full.grads().data(), blocks.grads().data(), full.grads().size()))
        << "gradients";
    // The mixtures are not uniform, and attnres differs from block_attnres(2).
    const float* w = full.res_weights(full.num_sublayers());
    EXPECT_GT(std::abs(w[0] - w[1]), 1e-3);
    Model<float> two(attnres_config(Scheme::block_attnres, 3, mlp, 2));
    two.params() = full.params();
    const float* c = two.forward(tokens.data(), B, T);
    EXPECT_FALSE(same_bits(la.data(), c, N * V));
  }
}

}  // namespace
}  // namespace normlab
