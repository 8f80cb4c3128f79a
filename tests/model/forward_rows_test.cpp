// The inference path (streaming attention, scored rows only) gives the training forward's
// logits, for every scheme, positional encoding and attention mask. AttnRes cases move their
// pseudo-queries away from zero first (at zero every mixture is a plain mean), and vary the
// block size so that the rows kept after the last attention cut through a block's partial sum.
// The two-stream schemes cut their second stream there too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "model/hyper_params.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"
#include "support/rounding.hpp"

namespace normlab {
namespace {

struct RowsCase {
  Scheme scheme;
  PosEncoding pos;
  bool causal;
  int layers;
  int block_size = 2;  // block_attnres
  bool mlp = true;
  std::optional<NormKind> norm = std::nullopt;  // unset: layernorm (l2 for ngpt)
  const char* attn_norms = "auto";              // placement override of the attention sublayers
  const char* placement = "";                   // the model's placement rules (docs/schemes.md)
  QkNorm qk_norm = QkNorm::none;
  int streams = 4;  // hyper_connections
  bool sinkhorn = false;
};

// gtest prints a case with this (its default prints the struct's bytes, padding included, so
// the names changed from run to run).
void PrintTo(const RowsCase& k, std::ostream* os) {
  *os << to_string(k.scheme) << ", " << to_string(k.pos) << (k.causal ? ", causal" : "")
      << ", layers " << k.layers << (k.mlp ? "" : ", no MLP");
  if (k.scheme == Scheme::block_attnres) *os << ", block " << k.block_size;
  if (k.scheme == Scheme::hyper_connections) {
    *os << ", streams " << k.streams << (k.sinkhorn ? ", sinkhorn" : "");
  }
  if (k.norm) *os << ", norm " << to_string(*k.norm);
  if (std::string(k.attn_norms) != "auto") *os << ", attn_norms " << k.attn_norms;
  if (*k.placement != '\0') *os << ", placement " << k.placement;
  if (k.qk_norm != QkNorm::none) *os << ", qk_norm " << to_string(k.qk_norm);
}

ModelConfig config_of(const RowsCase& k) {
  ModelConfig c;
  c.vocab = 11;
  c.width = 16;
  c.heads = 2;
  c.layers = k.layers;
  c.mlp = k.mlp;
  c.block_size = k.block_size;
  c.scheme = k.scheme;
  c.norm = k.norm.value_or(c.scheme == Scheme::ngpt ? NormKind::l2 : NormKind::layernorm);
  c.attn_norms = parse_norm_placement(k.attn_norms);
  c.placement = parse_placement(k.placement);
  c.qk_norm = k.qk_norm;
  if (c.scheme == Scheme::hyper_connections) {
    c.streams = k.streams;
    c.sinkhorn = k.sinkhorn;
  }
  c.pos = k.pos;
  c.causal = k.causal;
  c.max_len = 600;
  c.init_std = 0.3;
  return c;
}

// The case's model in float, initialized, with AttnRes queries and key gains, learnable residual
// and branch factors and hyper-connections' weights moved off their inits.
std::unique_ptr<Model<float>> model_of(const RowsCase& k) {
  auto m = std::make_unique<Model<float>>(config_of(k));
  m->init(3);
  Rng prng(4);
  for (const TensorSpec& t : m->layout().tensors()) {
    const bool query = t.name.ends_with("res_query") || t.name == "final_res.query";
    const bool factor = t.name.ends_with("_scale") && t.name.starts_with("layers.");
    if (!query && !factor && !t.name.ends_with("res_norm.weight")) continue;
    for (int64_t i = t.offset; i < t.offset + t.size; ++i) {
      m->params()[i] = static_cast<float>(query ? 0.5 * prng.normal() : 1 + 0.3 * prng.normal());
    }
  }
  randomize_hyper(*m, 5);  // hyper-connections: the dynamic weights and the Sinkhorn mix
  return m;
}

// Long enough that the streaming kernel crosses several key blocks of 256.
constexpr int64_t kRowsBatch = 2, kRowsLen = 600, kRowsFields = 2;

struct ListedLogits {
  std::vector<double> full;  // the training forward's logits of the listed rows
  std::vector<double> rows;  // forward_rows's
};

template <typename T>
ListedLogits listed_logits(Model<T>& m) {
  const int V = m.config().vocab;
  Rng rng(9);
  std::vector<int32_t> tokens(kRowsBatch * kRowsLen * kRowsFields);
  // Field 0 always holds a token; field 1 is empty a third of the time.
  for (size_t k = 0; k < tokens.size(); ++k) {
    const bool empty = k % kRowsFields != 0 && rng.below(3) == 0;
    tokens[k] = empty ? -1 : static_cast<int32_t>(rng.below(V));
  }
  const std::vector<int64_t> rows = {
      0, 5, 299, kRowsLen - 1, kRowsLen, kRowsLen + 257, 2 * kRowsLen - 1};
  ListedLogits out;
  const T* full = m.forward(tokens.data(), kRowsBatch, kRowsLen, kRowsFields);
  for (int64_t r : rows) out.full.insert(out.full.end(), full + r * V, full + (r + 1) * V);
  const T* got = m.forward_rows(tokens.data(), kRowsBatch, kRowsLen, kRowsFields, rows);
  out.rows.assign(got, got + rows.size() * V);
  return out;
}

class ForwardRows : public ::testing::TestWithParam<RowsCase> {};

// The streaming path's logits against the training forward's, both in float and in double, the
// double model holding the float model's parameters. The reference is the training forward in
// double. In float the streaming path's error is bounded by the training forward's float error
// as support/rounding.hpp says, K the roundings of the forward (forward_roundings); in double,
// which decides whether the two paths compute the same function, by that bound times eps64 / eps32.
TEST_P(ForwardRows, MatchesTrainingForward) {
  using namespace normlab::testing;
  const std::unique_ptr<Model<float>> m32 = model_of(GetParam());
  Model<double> m64(m32->config());
  m64.params().assign(m32->params().begin(), m32->params().end());
  const ListedLogits f = listed_logits(*m32), d = listed_logits(m64);
  const double K = forward_roundings(m32->config(), kRowsLen);
  const double bound = rounding_bound(K, max_abs_diff(f.full, d.full), max_abs(d.full));
  const double err32 = max_abs_diff(f.rows, d.full), err64 = max_abs_diff(d.rows, d.full);
  EXPECT_LE(err32, bound) << "float";
  EXPECT_LE(err64, bound * kEps64 / kEps32) << "double";
  std::printf("err/bound float %.3f, double %.3f\n", err32 / bound,
              err64 / (bound * kEps64 / kEps32));
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, ForwardRows,
    ::testing::Values(
        RowsCase{Scheme::pre, PosEncoding::none, true, 1},
        RowsCase{Scheme::post, PosEncoding::rope, true, 2},
        // ALiBi in the streaming attention, causal and bidirectional.
        RowsCase{Scheme::pre, PosEncoding::alibi, true, 2},
        RowsCase{Scheme::peri, PosEncoding::alibi, false, 2},
        // Transformer-XL's relative terms in the streaming attention.
        RowsCase{Scheme::pre, PosEncoding::relative, true, 2},
        RowsCase{Scheme::post, PosEncoding::relative, false, 2},
        RowsCase{Scheme::peri_init, PosEncoding::sinusoidal, false, 2},
        RowsCase{Scheme::post_attn, PosEncoding::learned, true, 1},
        RowsCase{Scheme::ngpt, PosEncoding::none, false, 2},
        // nGPT's q/k normalization after RoPE; N(x) of learned positions.
        RowsCase{Scheme::ngpt, PosEncoding::rope, true, 3},
        RowsCase{Scheme::ngpt, PosEncoding::learned, true, 2},
        RowsCase{Scheme::deepnorm, PosEncoding::none, true, 3},
        RowsCase{Scheme::mix, PosEncoding::rope, false, 2},
        RowsCase{Scheme::sqrt_scaling, PosEncoding::none, true, 2},
        RowsCase{Scheme::attnres, PosEncoding::rope, true, 2},
        RowsCase{Scheme::attnres, PosEncoding::none, false, 2, 1, false},
        RowsCase{Scheme::block_attnres, PosEncoding::learned, true, 2, 3},
        RowsCase{Scheme::block_attnres, PosEncoding::none, false, 3, 2},
        RowsCase{Scheme::block_attnres, PosEncoding::sinusoidal, true, 3, 2, false},
        RowsCase{Scheme::block_attnres, PosEncoding::rope, true, 3, 4},
        RowsCase{Scheme::layernorm_scaling, PosEncoding::rope, true, 3},
        RowsCase{Scheme::rezero, PosEncoding::learned, true, 2},
        RowsCase{Scheme::pre_and_post, PosEncoding::none, false, 2},
        // Two streams: y (and SiameseNorm's x̂) cut to the listed rows at the last
        // attention, with an MLP after it and without.
        RowsCase{
            .scheme = Scheme::resi_dual, .pos = PosEncoding::rope, .causal = true, .layers = 2},
        RowsCase{Scheme::resi_dual, PosEncoding::learned, false, 2, 2, false},
        RowsCase{
            .scheme = Scheme::siamesenorm, .pos = PosEncoding::rope, .causal = true, .layers = 3},
        // Hyper-connections: the n streams and the sublayer's weights cut to the
        // listed rows at the last attention; HC and mHC.
        RowsCase{.scheme = Scheme::hyper_connections,
                 .pos = PosEncoding::rope,
                 .causal = true,
                 .layers = 2},
        RowsCase{.scheme = Scheme::hyper_connections,
                 .pos = PosEncoding::learned,
                 .causal = false,
                 .layers = 2,
                 .mlp = false,
                 .norm = NormKind::rmsnorm,
                 .streams = 3},
        RowsCase{.scheme = Scheme::hyper_connections,
                 .pos = PosEncoding::sinusoidal,
                 .causal = true,
                 .layers = 3,
                 .sinkhorn = true},
        RowsCase{.scheme = Scheme::hyper_connections,
                 .pos = PosEncoding::none,
                 .causal = true,
                 .layers = 2,
                 .mlp = false,
                 .norm = NormKind::derf,
                 .streams = 2,
                 .sinkhorn = true},
        RowsCase{.scheme = Scheme::siamesenorm,
                 .pos = PosEncoding::sinusoidal,
                 .causal = false,
                 .layers = 2,
                 .mlp = false,
                 .norm = NormKind::rmsnorm},
        RowsCase{.scheme = Scheme::siamesenorm,
                 .pos = PosEncoding::none,
                 .causal = true,
                 .layers = 2,
                 .norm = NormKind::derf},
        RowsCase{.scheme = Scheme::custom,
                 .pos = PosEncoding::rope,
                 .causal = true,
                 .layers = 3,
                 .placement = "all: in+post, residual=scalar(0.9), branch=vector(0.5), "
                              "input=1/sqrt(l+1); attn[1:]: out; final: on; embed: on"},
        // The kinds with scalar parameters, as the model's norm and on one slot.
        RowsCase{.scheme = Scheme::pre,
                 .pos = PosEncoding::none,
                 .causal = true,
                 .layers = 2,
                 .norm = NormKind::dyt},
        RowsCase{.scheme = Scheme::post,
                 .pos = PosEncoding::rope,
                 .causal = true,
                 .layers = 2,
                 .norm = NormKind::derf},
        RowsCase{.scheme = Scheme::peri_init,
                 .pos = PosEncoding::sinusoidal,
                 .causal = false,
                 .layers = 2,
                 .norm = NormKind::scalenorm},
        RowsCase{.scheme = Scheme::ngpt,
                 .pos = PosEncoding::none,
                 .causal = true,
                 .layers = 2,
                 .norm = NormKind::scalenorm},
        RowsCase{.scheme = Scheme::block_attnres,
                 .pos = PosEncoding::learned,
                 .causal = true,
                 .layers = 3,
                 .block_size = 2,
                 .norm = NormKind::derf},
        RowsCase{.scheme = Scheme::post,
                 .pos = PosEncoding::learned,
                 .causal = true,
                 .layers = 2,
                 .attn_norms = "out:dyt"},
        RowsCase{.scheme = Scheme::pre,
                 .pos = PosEncoding::rope,
                 .causal = true,
                 .layers = 2,
                 .norm = NormKind::rmsnorm,
                 .attn_norms = "in:scalenorm+post:derf"},
        // QK-norm on the streamed q and k rows, and HybridNorm's q, k, v norms.
        RowsCase{.scheme = Scheme::pre,
                 .pos = PosEncoding::rope,
                 .causal = true,
                 .layers = 2,
                 .qk_norm = QkNorm::l2},
        RowsCase{.scheme = Scheme::post,
                 .pos = PosEncoding::none,
                 .causal = false,
                 .layers = 2,
                 .qk_norm = QkNorm::rmsnorm},
        RowsCase{.scheme = Scheme::block_attnres,
                 .pos = PosEncoding::rope,
                 .causal = true,
                 .layers = 3,
                 .block_size = 2,
                 .qk_norm = QkNorm::l2},
        RowsCase{.scheme = Scheme::peri,
                 .pos = PosEncoding::learned,
                 .causal = true,
                 .layers = 2,
                 .mlp = false,
                 .qk_norm = QkNorm::rmsnorm},
        RowsCase{Scheme::hybridnorm, PosEncoding::rope, true, 2},
        RowsCase{.scheme = Scheme::hybridnorm,
                 .pos = PosEncoding::none,
                 .causal = true,
                 .layers = 3,
                 .norm = NormKind::rmsnorm,
                 .placement = "all[0:1]: in"},
        RowsCase{.scheme = Scheme::hybridnorm,
                 .pos = PosEncoding::sinusoidal,
                 .causal = false,
                 .layers = 2,
                 .mlp = false,
                 .norm = NormKind::dyt},
        // Value residual: every attention's values mixed with V_1, which inference keeps for
        // all rows while the stream narrows to the listed ones.
        RowsCase{Scheme::resformer, PosEncoding::rope, true, 3},
        RowsCase{.scheme = Scheme::resformer,
                 .pos = PosEncoding::none,
                 .causal = false,
                 .layers = 3,
                 .mlp = false,
                 .norm = NormKind::rmsnorm,
                 .qk_norm = QkNorm::rmsnorm}));

}  // namespace
}  // namespace normlab

namespace normlab {
namespace {

// Training with listed rows (only scored rows reach the unembedding) gives the gradients of
// the full forward with the other rows unscored.
TEST(ForwardListedRows, GradientsMatchTheFullForward) {
  const std::pair<Scheme, NormKind> cases[] = {
      {Scheme::pre, NormKind::layernorm},     {Scheme::post, NormKind::layernorm},
      {Scheme::ngpt, NormKind::l2},           {Scheme::peri, NormKind::layernorm},
      {Scheme::attnres, NormKind::layernorm}, {Scheme::block_attnres, NormKind::layernorm},
      {Scheme::pre, NormKind::dyt},           {Scheme::post, NormKind::derf},
      {Scheme::peri, NormKind::scalenorm}};
  for (const auto& [scheme, norm] : cases) {
    ModelConfig c;
    c.vocab = 9;
    c.width = 8;
    c.heads = 2;
    c.layers = 2;
    c.scheme = scheme;
    c.norm = norm;
    c.init_std = 0.3;
    Model<double> m(c);
    m.init(4);
    Rng prng(5);
    for (const TensorSpec& t : m.layout().tensors()) {  // AttnRes queries away from zero
      if (!t.name.ends_with("res_query") && t.name != "final_res.query") continue;
      for (int64_t i = t.offset; i < t.offset + t.size; ++i) m.params()[i] = 0.5 * prng.normal();
    }
    const int64_t B = 3, T = 5, N = B * T, V = c.vocab;
    Rng rng(2);
    std::vector<int32_t> tokens(N);
    for (auto& t : tokens) t = static_cast<int32_t>(rng.below(V));
    const std::vector<int64_t> rows = {2, 4, 9, 14};
    std::vector<double> dlogits_rows(rows.size() * V);
    for (auto& d : dlogits_rows) d = rng.normal();
    std::vector<double> dlogits_full(N * V, 0.0);
    for (size_t k = 0; k < rows.size(); ++k) {
      std::copy(dlogits_rows.begin() + k * V, dlogits_rows.begin() + (k + 1) * V,
                dlogits_full.begin() + rows[k] * V);
    }
    const double* full = m.forward(tokens.data(), B, T, 1);
    std::vector<double> full_logits(full, full + N * V);
    m.zero_grads();
    m.backward(dlogits_full.data());
    const std::vector<double> expected = m.grads();
    const double* listed = m.forward(tokens.data(), B, T, 1, &rows);
    for (size_t k = 0; k < rows.size(); ++k) {
      for (int v = 0; v < V; ++v) {
        EXPECT_NEAR(listed[k * V + v], full_logits[rows[k] * V + v], 1e-12);
      }
    }
    m.zero_grads();
    m.backward(dlogits_rows.data());
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_NEAR(m.grads()[i], expected[i], 1e-12)
          << to_string(scheme) << "/" << to_string(norm) << " param " << i;
    }
  }
}

}  // namespace
}  // namespace normlab
