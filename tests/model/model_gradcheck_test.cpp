// Finite-difference check of the whole model: for every valid scheme × norm kind, a 2-layer
// model with MLP in double precision; the analytic gradient of the cross-entropy loss against
// central differences, per parameter tensor, relative error below 1e-6.
//
// ModelGradCheckVariant extends the coverage to the options the first suite keeps fixed:
// RoPE, sinusoidal and no positions, tied unembedding, bidirectional attention, relu, 1 and 4
// heads, the MLP and readout biases (moved off their zero init first), no MLP, 3 layers with mix(k)
// for k = 0..3, embedding norm and final norm forced on and off, and batches of several sequences,
// each under the same bound.
//
// AttnRes (attnres, block_attnres with block sizes 1, 2, 3, 4) is in both suites. Its
// pseudo-queries start at zero, where the key-norm gains get no gradient; the checks move every
// query and gain to random values first, so that the mixtures are far from uniform and every
// path carries signal.
//
// The norm kinds with scalar parameters (dyt, derf, scalenorm) are in both suites too, with
// their scalars, gains and biases moved off their inits first (randomize_scalar_norms).
//
// ngpt is in the first suite under every norm kind (N of its interpolation, N_x(x), and its
// post-norm take the model's kind; q and k are always l2) and in the second with RoPE (its q/k
// normalization comes after it), sinusoidal positions, a tied unembedding and no MLP; its scales
// (alpha, s_qk, s_uv, s_z) move off their inits first, alpha to both signs (randomize_ngpt).
//
// QK-norm (l2 with its per-head scale, rmsnorm with its gain) is in the second suite under
// pre, post, peri, block_attnres and the unnormalized baseline, with RoPE and without; the
// scales move to 4 ± 1 and the gains to 1 ± 0.3 first. hybridnorm is a row, so the first suite
// checks it under every norm kind (its q, k and v norms take the model's kind); the second
// adds RoPE, four heads, no MLP and HybridNorm* (a pre-norm first layer). The two-stream rows
// (resi_dual, siamesenorm) are in the first suite under every norm kind but none, and in the
// second with the options above. hyper_connections is in the first suite (HC) and in
// HyperGradCheck (mHC under every norm kind but none; HC and mHC with 2 and 3 streams and the
// options above), its weights moved off their inits first (tests/model/hyper_params.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/kernels/cross_entropy.hpp"
#include "core/kernels/dropout.hpp"
#include "model/hyper_params.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"
#include "normlab/model/scheme_table.hpp"
#include "support/config_line.hpp"

namespace normlab {
namespace {

using testing::config_line;

struct GradBatch {
  std::vector<int32_t> tokens;
  std::vector<double> target;  // (N, V) soft targets, every token listed (row n → target n)
  std::vector<int32_t> target_tokens;   // (N, V) 0 … V−1 in every row
  std::vector<int64_t> target_offsets;  // (N + 1) n·V
  std::vector<double> weight;           // (N) with some positions unscored

  SparseTargets<double> targets() const {
    return {.slot = nullptr,
            .offsets = target_offsets.data(),
            .tokens = target_tokens.data(),
            .probs = target.data()};
  }
};

GradBatch make_batch(const ModelConfig& c, int64_t B, int64_t T, uint64_t seed) {
  Rng rng(seed);
  GradBatch b;
  const int64_t N = B * T;
  for (int64_t n = 0; n < N; ++n) b.tokens.push_back(static_cast<int32_t>(rng.below(c.vocab)));
  b.target.resize(N * c.vocab);
  for (int64_t n = 0; n < N; ++n) {
    double sum = 0;
    for (int v = 0; v < c.vocab; ++v) sum += b.target[n * c.vocab + v] = rng.uniform();
    for (int v = 0; v < c.vocab; ++v) b.target[n * c.vocab + v] /= sum;
    b.weight.push_back(n % 3 == 1 ? 0.0 : 1.0);
    for (int v = 0; v < c.vocab; ++v) b.target_tokens.push_back(v);
    b.target_offsets.push_back(n * c.vocab);
  }
  b.target_offsets.push_back(N * c.vocab);
  return b;
}

double loss_of(Model<double>& m, const GradBatch& b, int64_t B, int64_t T,
               std::vector<double>* dlogits) {
  const double* logits = m.forward(b.tokens.data(), B, T);
  return cross_entropy(logits, b.targets(), b.weight.data(), dlogits ? dlogits->data() : nullptr,
                       B * T, m.config().vocab);
}

// "layers.L.attn" or "layers.L.mlp" of sublayer i.
std::string sublayer_name(const Model<double>& m, int i) {
  const int per_layer = m.config().sublayers_per_layer();
  return "layers." + std::to_string(i / per_layer) + (i % per_layer == 0 ? ".attn" : ".mlp");
}

// Returns the worst per-tensor relative error and names it in `worst`.
double max_relative_error(Model<double>& m, const GradBatch& b, int64_t B, int64_t T,
                          std::string* worst) {
  std::vector<double> dlogits(B * T * m.config().vocab);
  loss_of(m, b, B, T, &dlogits);
  m.zero_grads();
  m.backward(dlogits.data());
  const std::vector<double> analytic = m.grads();
  double worst_err = 0;
  for (const TensorSpec& t : m.layout().tensors()) {
    // A one-element tensor (a norm's scalar: dyt/derf alpha, derf shift, scalenorm scale;
    // ReZero's factor) moves every element of its output at once, so the loss's higher
    // derivatives in it are far larger than in one entry of a matrix: the two-point
    // difference's truncation error (h^2/6 times the third derivative) reached 5e-7 of the
    // gradient at h = 1e-5, and its rounding error 1.2e-6 at h = 1e-6 (pre_and_post/derf).
    // The five-point stencil's truncation is O(h^4), so h = 1e-4 keeps both far below the
    // bound.
    // SiameseNorm stacks three norms per sublayer and two more at the output: under derf the
    // two-point difference's truncation error reached 1.6e-6 of a matrix's gradient at h = 1e-5
    // (the PyTorch twin agreed with the analytic gradient to 8e-7 in float32), so its tensors
    // take the five-point stencil too.
    const bool scalar = t.size == 1;
    // Hyper-connections under dyt and derf: the same, 1.3e-6 and 2.3e-6 of W_α's gradient at
    // h = 1e-5 (every stream's weights go through tanh twice, dyt's and W_α's).
    const bool five_point = scalar || m.config().scheme == Scheme::siamesenorm ||
                            m.config().scheme == Scheme::hyper_connections;
    const double h = five_point ? 1e-4 : 1e-5;
    // A bias of the key norm (hybridnorm under layernorm, dyt, derf) adds ⟨q_i, b⟩ to every
    // logit of query i, which the softmax ignores: without RoPE (which rotates b by the key's
    // position) its gradient is exactly 0, and both sides are rounding noise. Checked as zero.
    const bool zero = t.name.ends_with(".k_norm.bias") && m.config().pos != PosEncoding::rope;
    // SiameseNorm's first sublayer reads N_in(N_x(e) + N_y(e)), both streams being the
    // embedding e: under scalenorm that is N_in((c_x + c_y) e / sqrt(Σe² + eps)), which depends
    // on N_y's scale c_y only through N_in's eps (N_x's scale also scales the stream x, so its
    // gradient is whole). That gradient is ~1e-8 here, and the differences' rounding (~3e-12)
    // is too large a share of it for the relative bound: checked as absolute.
    // ngpt under scalenorm: the scale of an MLP's post-norm that the next layer's attention reads
    // acts only through eps too. That attention normalizes q and k itself and its output by
    // N_out (scalenorm: the value path's scale cancels), and the interpolation reads N_x(h):
    // the gradient is 2.6e-10 here (layers.0.mlp), and the differences' rounding (5e-13) a
    // large share of it. Checked as absolute.
    const bool ngpt_eps_only =
        m.config().scheme == Scheme::ngpt && m.config().norm == NormKind::scalenorm &&
        t.name.ends_with(".mlp.norm_post.scale") &&
        t.name != sublayer_name(m, m.num_sublayers() - 1) + ".norm_post.scale";
    const bool eps_only =
        (m.config().scheme == Scheme::siamesenorm && m.config().norm == NormKind::scalenorm &&
         t.name == "layers.0.attn.y_norm.scale") ||
        ngpt_eps_only;
    // mHC's weights where the block leaves them (almost) no effect. The first sublayer reads n
    // equal streams (each the embedding): its H_res acts only through how far its row sums are
    // from 1 after 20 Sinkhorn iterations, and its H_pre only scales h = (Σ H_pre) e, which the
    // input norm removes but for its eps (dyt and derf do not remove it). The last sublayer's
    // streams are summed into the output, where only H_res's column sums act, and those are
    // exactly 1. These gradients are 1e-9 to 7e-6 (H_pre under the kinds that divide by a
    // statistic) or below 1e-8 (H_res; the last one's exactly 0), against 0.1 for H_pre under
    // dyt and derf, and the differences' rounding (~3e-11) is a large share of them: below
    // 1e-4 they are checked as absolute, |difference| < 1e-9. The sublayers between carry the
    // whole gradient of H_res and H_pre and are checked relatively.
    const int S = m.num_sublayers();
    auto mhc_tensor = [&](const std::string& prefix, std::initializer_list<const char*> leaves) {
      if (!m.config().sinkhorn || !t.name.starts_with(prefix + ".hc.")) return false;
      for (const char* leaf : leaves) {
        if (t.name.ends_with(std::string(".") + leaf)) return true;
      }
      return false;
    };
    const bool edge_mhc = mhc_tensor(sublayer_name(m, 0), {"phi_res", "alpha_res", "b_res",
                                                           "phi_pre", "alpha_pre", "b_pre"}) ||
                          mhc_tensor(sublayer_name(m, S - 1), {"phi_res", "alpha_res", "b_res"});
    double max_a = 0, max_n = 0;
    double diff2 = 0, norm_a = 0, norm_n = 0;
    for (int64_t i = t.offset; i < t.offset + t.size; ++i) {
      const double saved = m.params()[i];
      auto loss_at = [&](double value) {
        m.params()[i] = value;
        return loss_of(m, b, B, T, nullptr);
      };
      double numeric = 0;
      if (five_point) {
        numeric = (8 * (loss_at(saved + h) - loss_at(saved - h)) -
                   (loss_at(saved + 2 * h) - loss_at(saved - 2 * h))) /
                  (12 * h);
      } else {
        numeric = (loss_at(saved + h) - loss_at(saved - h)) / (2 * h);
      }
      m.params()[i] = saved;
      max_a = std::max(max_a, std::abs(analytic[i]));
      max_n = std::max(max_n, std::abs(numeric));
      diff2 += (numeric - analytic[i]) * (numeric - analytic[i]);
      norm_a += analytic[i] * analytic[i];
      norm_n += numeric * numeric;
    }
    const double denom = std::sqrt(norm_a) + std::sqrt(norm_n);
    double err = denom > 1e-12 ? std::sqrt(diff2) / denom : std::sqrt(diff2);
    if (zero) err = max_a < 1e-12 && max_n < 1e-8 ? 0.0 : 1.0;
    if (eps_only) err = std::sqrt(diff2) < 1e-10 ? 0.0 : 1.0;
    if (edge_mhc && std::max(max_a, max_n) < 1e-4) err = std::sqrt(diff2) < 1e-9 ? 0.0 : 1.0;
    if (err > worst_err) {
      worst_err = err;
      *worst = t.name;
    }
  }
  return worst_err;
}

// AttnRes: random pseudo-queries (std 0.7) and key-norm gains (1 ± 0.3); learnable residual
// and branch factors 0.6 ± 0.3 (ReZero's start at 0, where the branch gradients vanish);
// no-op otherwise.
void randomize_res_params(Model<double>& m, uint64_t seed) {
  Rng rng(seed);
  for (const TensorSpec& t : m.layout().tensors()) {
    const bool query = t.name.ends_with("res_query") || t.name == "final_res.query";
    const bool gain = t.name.ends_with("res_norm.weight");
    const bool factor = t.name.ends_with("_scale") && t.name.starts_with("layers.") &&
                        !t.name.ends_with("qk_scale");
    if (!query && !gain && !factor) continue;
    for (int64_t i = t.offset; i < t.offset + t.size; ++i) {
      m.params()[i] = query    ? 0.7 * rng.normal()
                      : factor ? 0.6 + 0.3 * rng.normal()
                               : 1.0 + 0.3 * rng.normal();
    }
  }
}

// QK-norm: the l2 variant's per-head scales s_h (init 10) to 4 ± 1, the rmsnorm gains of q
// and k (init 1) to 1 ± 0.3, so that no head shares another's value.
void randomize_qk_norm(Model<double>& m, uint64_t seed) {
  Rng rng(seed);
  for (const TensorSpec& t : m.layout().tensors()) {
    const bool scale = t.name.ends_with(".qk_scale");
    const bool gain = t.name.ends_with(".q_norm.weight") || t.name.ends_with(".k_norm.weight") ||
                      t.name.ends_with(".v_norm.weight");
    if (!scale && !gain) continue;
    for (int64_t i = t.offset; i < t.offset + t.size; ++i) {
      m.params()[i] = scale ? 4.0 + rng.normal() : 1.0 + 0.3 * rng.normal();
    }
  }
}

// The norms with scalar parameters ("<norm>.alpha", ".shift", ".scale", shape (1)): α to
// 1 ± 0.3, s to ± 0.3, c to c (1 ± 0.3), and the norm's gain to 2 ± 0.3 and bias to ± 0.3;
// no-op for the other kinds. dyt and derf do not rescale their input (|tanh| < 1), so with unit
// gains the attention logits stay small, the q/k gradients fall to ~3e-6 (ngpt/dyt) and the
// central differences' rounding (~1e-11 per entry at h = 1e-5) reaches 1e-5 of them; and at
// s = 0, erf(α·x + s) and erf(α·(x + s)) agree.
void randomize_scalar_norms(Model<double>& m, uint64_t seed) {
  Rng rng(seed);
  for (const TensorSpec& t : m.layout().tensors()) {
    if (t.shape != std::vector<int64_t>{1}) continue;
    const size_t dot = t.name.rfind('.');
    const std::string prefix = t.name.substr(0, dot), scalar = t.name.substr(dot + 1);
    double& v = m.params()[t.offset];
    if (scalar == "alpha") v = 1.0 + 0.3 * rng.normal();
    if (scalar == "shift") v = 0.3 * rng.normal();
    if (scalar == "scale") v *= 1.0 + 0.3 * rng.normal();
    if (scalar == "shift") continue;  // its norm's gain and bias were moved with its alpha
    for (const auto& [name, mean] : {std::pair{".weight", 2.0}, std::pair{".bias", 0.0}}) {
      const TensorSpec* p = m.layout().find(prefix + name);
      if (p == nullptr) continue;
      for (int64_t i = p->offset; i < p->offset + p->size; ++i) {
        m.params()[i] = mean + 0.3 * rng.normal();
      }
    }
  }
}

// nGPT's scales (stored values, ngpt_scales): alpha to ±base (0.5 … 1.5) with random signs (it
// enters as |alpha|), s_qk and s_z to base (1 ± 0.3), s_uv to 1 ± 0.3, so that no feature
// shares another's value; no-op for the other schemes.
void randomize_ngpt(Model<double>& m, uint64_t seed) {
  if (m.config().scheme != Scheme::ngpt) return;
  Rng rng(seed);
  const double base = 1 / std::sqrt(static_cast<double>(m.config().width));
  for (const TensorSpec& t : m.layout().tensors()) {
    const bool alpha = t.name.ends_with(".alpha") && t.size > 1;
    const bool around_base = t.name.ends_with(".s_qk") || t.name == "logit_scale";
    const bool around_one = t.name.ends_with(".s_uv");
    if (!alpha && !around_base && !around_one) continue;
    for (int64_t i = t.offset; i < t.offset + t.size; ++i) {
      if (alpha) {
        m.params()[i] = (rng.uniform() < 0.5 ? -1 : 1) * base * (0.5 + rng.uniform());
      } else {
        m.params()[i] = (around_base ? base : 1.0) * (1.0 + 0.3 * rng.normal());
      }
    }
  }
}

// mlp_bias, readout_bias: the biases (zero at init) to ± 0.3, so that the forward's use of them
// is checked as well as their gradients; no-op without them.
void randomize_biases(Model<double>& m, uint64_t seed) {
  Rng rng(seed);
  for (const TensorSpec& t : m.layout().tensors()) {
    if (!t.name.ends_with(".up.bias") && !t.name.ends_with(".down.bias") &&
        t.name != "unembed.bias") {
      continue;
    }
    for (int64_t i = t.offset; i < t.offset + t.size; ++i) m.params()[i] = 0.3 * rng.normal();
  }
}

struct Case {
  Scheme scheme;
  NormKind norm;
};

std::vector<Case> all_valid_cases() {
  std::vector<Case> cases;
  for (const SchemeRow& row : scheme_table()) {
    for (const std::string& name : norm_kind_names()) {
      const NormKind k = parse_norm_kind(name);
      if (k == NormKind::none && !row.norm_none_allowed) continue;
      cases.push_back({row.scheme, k});
    }
  }
  return cases;
}

// The model of the whole-model checks: V = 7, D = 8, 2 heads, 2 layers, MLP 2×, learned
// positions up to 8, weights with std 0.4 (large enough that every path carries signal).
ModelConfig gradcheck_config(Scheme scheme, NormKind norm) {
  ModelConfig c;
  c.vocab = 7;
  c.width = 8;
  c.heads = 2;
  c.layers = 2;
  c.mlp = true;
  c.mlp_mult = 2;
  c.scheme = scheme;
  c.norm = norm;
  c.init_std = 0.4;
  c.pos = PosEncoding::learned;
  c.max_len = 8;
  return c;
}

class ModelGradCheck : public ::testing::TestWithParam<Case> {};

TEST_P(ModelGradCheck, MatchesCentralDifferences) {
  ModelConfig c = gradcheck_config(GetParam().scheme, GetParam().norm);
  c.mix_layers = 1;
  Model<double> m(c);
  m.init(11);
  randomize_res_params(m, 13);
  randomize_scalar_norms(m, 17);
  randomize_hyper(m, 19);
  randomize_ngpt(m, 23);
  const GradBatch b = make_batch(c, 2, 5, 5);
  std::string worst;
  const double err = max_relative_error(m, b, 2, 5, &worst);
  EXPECT_LT(err, 1e-6) << "worst tensor: " << worst;
  std::printf("worst %.2e (%s)\n", err, worst.c_str());
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return to_string(info.param.scheme) + "_" + to_string(info.param.norm);
}

INSTANTIATE_TEST_SUITE_P(AllSchemesAllNorms, ModelGradCheck, ::testing::ValuesIn(all_valid_cases()),
                         case_name);

// Hyper-connections (the row's HC in the suite above) and mHC (`sinkhorn`) under every norm kind
// but none, with n = 2, 3 and 4 streams, RoPE, no MLP, a tied unembedding, 3 layers and listed
// rows; their weights moved off their inits first (randomize_hyper).
struct HyperCase {
  std::string name;
  std::string line;  // config_line over gradcheck_config(hyper_connections, rmsnorm)
};

std::vector<HyperCase> hyper_cases() {
  std::vector<HyperCase> cases;
  for (const std::string& name : norm_kind_names()) {
    if (parse_norm_kind(name) == NormKind::none) continue;
    cases.push_back({"mhc_" + name, "sinkhorn=true streams=4 norm=" + name});
  }
  const std::vector<HyperCase> options = {
      {"hc_streams2_rope", "streams=2 norm=rmsnorm pos=rope"},
      {"hc_streams3_nomlp_layers3", "streams=3 norm=layernorm mlp=false layers=3"},
      {"hc_tied_embednorm", "streams=4 norm=dyt tied=true embed_norm=on"},
      {"mhc_streams2_rope_bidirectional",
       "sinkhorn=true streams=2 norm=layernorm pos=rope causal=false"},
      {"mhc_streams3_layers3_nofinal",
       "sinkhorn=true streams=3 norm=rmsnorm layers=3 final_norm=off"},
  };
  cases.insert(cases.end(), options.begin(), options.end());
  return cases;
}

class HyperGradCheck : public ::testing::TestWithParam<HyperCase> {};

TEST_P(HyperGradCheck, MatchesCentralDifferences) {
  const ModelConfig c =
      config_line(GetParam().line, gradcheck_config(Scheme::hyper_connections, NormKind::rmsnorm));
  Model<double> m(c);
  m.init(11);
  randomize_scalar_norms(m, 17);
  randomize_hyper(m, 19);
  const GradBatch b = make_batch(c, 2, 5, 5);
  std::string worst;
  const double err = max_relative_error(m, b, 2, 5, &worst);
  EXPECT_LT(err, 1e-6) << "worst tensor: " << worst;
  std::printf("worst %.2e (%s)\n", err, worst.c_str());
}

INSTANTIATE_TEST_SUITE_P(HyperConnections, HyperGradCheck, ::testing::ValuesIn(hyper_cases()),
                         [](const ::testing::TestParamInfo<HyperCase>& info) {
                           return info.param.name;
                         });

struct Variant {
  std::string name;
  std::string line;  // config_line over the base config below
  int64_t batch = 2, len = 5;
};

ModelConfig base_config() {
  ModelConfig c;
  c.vocab = 7;
  c.width = 8;
  c.heads = 2;
  c.layers = 2;
  c.mlp = true;
  c.mlp_mult = 2;
  c.init_std = 0.4;
  c.max_len = 8;
  return c;
}

std::vector<Variant> variants() {
  std::vector<Variant> v = {
      {"rope_pre_rmsnorm", "pos=rope"},
      {"rope_heads4_peri_layernorm", "pos=rope heads=4 scheme=peri norm=layernorm"},
      {"rope_bidirectional_post_rmsnorm", "pos=rope causal=false scheme=post"},
      {"sinusoidal_pre_layernorm", "pos=sinusoidal norm=layernorm"},
      {"sinusoid_from_end_post_layernorm",
       "pos=sinusoidal sinusoid_from_end=true scheme=post norm=layernorm causal=false"},
      {"alibi_pre_rmsnorm", "pos=alibi"},
      // Delétang et al.'s input: the token embeddings times sqrt(D), then sin/cos positions.
      {"embed_scale_sinusoidal_post_layernorm",
       "embed_scale=2.8284271247461903 pos=sinusoidal scheme=post norm=layernorm"},
      {"embed_scale_tied_pre_rmsnorm", "embed_scale=3 tied=true"},
      {"alibi_heads3_bidirectional_post_layernorm",
       "pos=alibi heads=3 width=12 causal=false scheme=post norm=layernorm"},
      // Transformer-XL's relative terms: u, v and W_R among the checked parameters.
      {"relative_pre_rmsnorm", "pos=relative"},
      // Dropout on the embedding stream and on every sublayer's output (a fixed mask).
      {"dropout_pre_rmsnorm", "dropout=0.3 embed_dropout=0.2"},
      {"dropout_post_layernorm_sinusoidal",
       "dropout=0.5 embed_dropout=0.5 scheme=post norm=layernorm pos=sinusoidal"},
      {"dropout_hyper_connections", "dropout=0.3 scheme=hyper_connections"},
      {"attn_dropout_pre_rmsnorm", "attn_dropout=0.3"},
      {"attn_dropout_relative_bidirectional_post",
       "attn_dropout=0.5 pos=relative causal=false scheme=post norm=layernorm"},
      {"relative_heads3_bidirectional_post_layernorm",
       "pos=relative heads=3 width=12 causal=false scheme=post norm=layernorm"},
      {"sinusoidal_ngpt_l2", "pos=sinusoidal scheme=ngpt norm=l2"},
      {"rope_ngpt_l2", "pos=rope scheme=ngpt norm=l2"},
      {"rope_heads4_bidirectional_ngpt_l2", "pos=rope heads=4 causal=false scheme=ngpt norm=l2", 3,
       7},
      {"nopos_bidirectional_pre_rmsnorm", "causal=false"},
      {"tied_pre_rmsnorm", "tied=true"},
      {"tied_post_layernorm", "tied=true scheme=post norm=layernorm"},
      {"tied_ngpt_l2", "tied=true scheme=ngpt norm=l2"},
      {"tied_none_baseline", "tied=true norm=none"},
      {"bidirectional_peri_init_standardize", "causal=false scheme=peri_init norm=standardize"},
      {"relu_pre_rmsnorm", "activation=relu"},
      {"relu_deepnorm_layernorm", "activation=relu scheme=deepnorm norm=layernorm"},
      {"heads1_pre_layernorm", "heads=1 norm=layernorm"},
      {"heads4_post_attn_rmsnorm", "heads=4 scheme=post_attn"},
      {"heads8_sqrt_scaling_l2", "heads=8 scheme=sqrt_scaling norm=l2"},
      {"nomlp_pre_rmsnorm", "mlp=false"},
      {"nomlp_ngpt_l2", "mlp=false scheme=ngpt"},
      {"embed_norm_on_pre_layernorm", "embed_norm=on norm=layernorm"},
      {"embed_norm_off_peri_init_rmsnorm", "embed_norm=off scheme=peri_init"},
      {"final_norm_off_pre_rmsnorm", "final_norm=off"},
      {"final_norm_on_post_layernorm", "final_norm=on scheme=post norm=layernorm"},
      {"final_norm_on_deepnorm_rmsnorm", "final_norm=on scheme=deepnorm"},
      {"embed_and_final_off_peri_init_layernorm",
       "embed_norm=off final_norm=off scheme=peri_init norm=layernorm"},
      {"layers3_deepnorm_rmsnorm", "layers=3 scheme=deepnorm"},
      {"layers3_sqrt_scaling_layernorm", "layers=3 scheme=sqrt_scaling norm=layernorm"},
      {"batch4_len3_learned_pre_rmsnorm", "pos=learned", 4, 3},
      {"batch3_len7_rope_heads4_mix1", "pos=rope heads=4 scheme=mix mix_layers=1", 3, 7},
      {"batch5_len1_pre_layernorm", "norm=layernorm", 5, 1},
  };
  // AttnRes: every block size from 1 (= attnres) to beyond the sublayer count, with and without
  // MLP (which changes which sublayers start a block), under several norms and options.
  for (int s = 1; s <= 4; ++s) {
    v.push_back({"block_attnres" + std::to_string(s) + "_layers3_rmsnorm",
                 "layers=3 scheme=block_attnres block_size=" + std::to_string(s)});
  }
  const std::vector<Variant> more = {
      {"block_attnres2_layers3_layernorm_rope",
       "layers=3 scheme=block_attnres block_size=2 norm=layernorm pos=rope"},
      {"block_attnres3_nomlp_layers3_standardize",
       "layers=3 mlp=false scheme=block_attnres block_size=3 norm=standardize"},
      {"block_attnres2_nomlp_layers3_l2_tied",
       "layers=3 mlp=false tied=true scheme=block_attnres block_size=2 norm=l2"},
      // Deep enough for the backward's chunks of 8 points (res_mix.cpp) to be several: S = 10
      // (attnres), 13 points in blocks of 2 and 15 points in blocks of 3 (chunks of 6, the last
      // one partial), so shared and per-point sources both appear across chunk boundaries.
      {"attnres_layers5_chunks", "layers=5 scheme=attnres"},
      {"block_attnres2_layers6_chunks", "layers=6 scheme=block_attnres block_size=2"},
      {"block_attnres3_layers7_chunks_partial_last", "layers=7 scheme=block_attnres block_size=3"},
      {"attnres_layers3_layernorm_embed_norm",
       "layers=3 scheme=attnres norm=layernorm embed_norm=on"},
      // The kinds with scalar parameters with the options that add or drop norms.
      {"embed_norm_on_pre_derf_rope", "embed_norm=on norm=derf pos=rope"},
      {"tied_peri_init_scalenorm", "tied=true scheme=peri_init norm=scalenorm"},
      {"final_norm_on_post_dyt_batch4_len3", "final_norm=on scheme=post norm=dyt", 4, 3},
      {"attnres_final_norm_off_bidirectional_rmsnorm",
       "scheme=attnres final_norm=off causal=false"},
      {"block_attnres2_batch3_len7_learned_heads4",
       "scheme=block_attnres block_size=2 pos=learned heads=4", 3, 7},
      // Two streams (resi_dual, siamesenorm; docs/schemes.md, "Two streams"): positions, heads,
      // depth, no MLP, tied, bidirectional, embedding norm, final norm toggled, several sequences.
      {"resi_dual_rope_tied_nomlp_layers3_layernorm",
       "scheme=resi_dual norm=layernorm pos=rope tied=true mlp=false layers=3"},
      {"resi_dual_final_norm_on_bidirectional_scalenorm",
       "scheme=resi_dual norm=scalenorm final_norm=on causal=false"},
      {"siamesenorm_embed_norm_sinusoidal_heads4_rmsnorm",
       "scheme=siamesenorm embed_norm=on pos=sinusoidal heads=4"},
      {"siamesenorm_final_norm_off_nomlp_layers3_l2",
       "scheme=siamesenorm norm=l2 final_norm=off mlp=false layers=3"},
      {"siamesenorm_batch3_len7_learned_derf", "scheme=siamesenorm norm=derf pos=learned", 3, 7},
      // Placement overrides (docs/schemes.md): slots and per-slot kinds replacing the row's norms.
      {"placement_post_attn_out_layernorm",
       "layers=3 scheme=post norm=layernorm attn_norms=out mlp_norms=auto"},
      {"placement_post_attn_out_standardize",
       "layers=3 scheme=post norm=layernorm attn_norms=out:standardize mlp_norms=auto"},
      {"placement_pre_all_slots_mixed_kinds",
       "layers=3 scheme=pre norm=rmsnorm attn_norms=in+out+post mlp_norms=in:layernorm+post:l2"},
      {"placement_pre_attn_none",
       "layers=3 scheme=pre norm=rmsnorm attn_norms=none mlp_norms=auto"},
      {"placement_sqrt_scaling_post",
       "layers=3 scheme=sqrt_scaling norm=layernorm attn_norms=post "
       "mlp_norms=out+post:standardize"},
      {"placement_deepnorm_in",
       "layers=3 scheme=deepnorm norm=rmsnorm attn_norms=in mlp_norms=in+post"},
      {"placement_block_attnres_in_out",
       "layers=3 scheme=block_attnres norm=layernorm attn_norms=in+out:rmsnorm mlp_norms=out"},
      // The scalar-parameter kinds on one slot among other kinds.
      {"placement_post_attn_out_dyt",
       "layers=3 scheme=post norm=layernorm attn_norms=out:dyt mlp_norms=auto"},
      // dyt as the model's norm: under an rmsnorm final norm the last scalenorm's scale would
      // cancel (its gradient is 0 up to eps, and its relative error meaningless).
      {"placement_pre_mlp_derf_scalenorm",
       "layers=3 scheme=pre norm=dyt attn_norms=auto mlp_norms=in:derf+post:scalenorm"},
      {"placement_peri_attn_in_scalenorm",
       "layers=3 scheme=peri norm=dyt attn_norms=in:scalenorm+out mlp_norms=auto"},
      {"placement_block_attnres_out_derf",
       "layers=3 scheme=block_attnres norm=rmsnorm attn_norms=in+out:derf mlp_norms=auto"},
      // Written placements (the placement language): every setting, layer ranges, learnable
      // factors, the stream's norms.
      {"written_every_setting",
       "layers=3 scheme=custom placement=\"all: in+post:layernorm, residual=scalar(0.9), "
       "branch=vector(0.5), input=1/sqrt(l+1); attn[1:]: out; final: on; embed: on\""},
      {"written_layer_ranges",
       "layers=3 scheme=pre placement=\"attn[0:1]: post, residual=0.5; mlp[1:3]: in+out, "
       "branch=1/sqrt(l+1); final: off\""},
      {"written_learnable_residual",
       "layers=3 scheme=post placement=\"all: post, residual=vector(1.2)\""},
      {"written_input_scale_without_norm",
       "layers=3 scheme=custom placement=\"all: none, input=0.7, branch=0.8\""},
      // QK-norm on other schemes (docs/schemes.md): the norms come before RoPE.
      {"qk_l2_pre_rope", "scheme=pre qk_norm=l2 pos=rope norm=rmsnorm heads=2"},
      {"qk_rmsnorm_pre_nopos", "scheme=pre qk_norm=rmsnorm pos=none norm=rmsnorm heads=2"},
      {"qk_l2_post_learned_layernorm", "scheme=post qk_norm=l2 pos=learned norm=layernorm heads=2"},
      {"qk_rmsnorm_post_rope_heads4", "scheme=post qk_norm=rmsnorm pos=rope norm=rmsnorm heads=4"},
      {"qk_l2_peri_rope_heads1", "scheme=peri qk_norm=l2 pos=rope norm=layernorm heads=1"},
      {"qk_rmsnorm_peri_sinusoidal_dyt",
       "scheme=peri qk_norm=rmsnorm pos=sinusoidal norm=dyt heads=2"},
      {"qk_l2_block_attnres2_rope",
       "scheme=block_attnres qk_norm=l2 pos=rope norm=rmsnorm heads=2"},
      {"qk_rmsnorm_block_attnres2_nopos_layernorm",
       "scheme=block_attnres qk_norm=rmsnorm pos=none norm=layernorm heads=4"},
      {"qk_rmsnorm_pre_none_baseline_rope",
       "scheme=pre qk_norm=rmsnorm pos=rope norm=none heads=2"},
      {"qk_l2_rezero_learned", "scheme=rezero qk_norm=l2 pos=learned norm=rmsnorm heads=2"},
      // HybridNorm with the options the first suite keeps fixed, and HybridNorm* (its first layer
      // pre-norm, written as a placement).
      {"hybridnorm_rope_rmsnorm", "scheme=hybridnorm pos=rope"},
      // Width 16: a layernorm over dh = 2 features is ±1 up to eps, whose curvature the central
      // differences cannot follow.
      {"hybridnorm_rope_heads4_layernorm_layers3",
       "scheme=hybridnorm pos=rope width=16 heads=4 layers=3 norm=layernorm"},
      // Not scalenorm here: without an MLP the last post-norm feeds the final norm, which would
      // cancel its scale (a gradient of 0 up to eps).
      {"hybridnorm_nomlp_bidirectional_layernorm",
       "scheme=hybridnorm mlp=false causal=false norm=layernorm"},
      {"hybridnorm_star_rope_rmsnorm_layers3",
       "scheme=hybridnorm pos=rope layers=3 placement=\"all[0:1]: in\""},
      // Value residual (resformer): V_1 reaches every later attention and gathers their
      // gradients; with QK-norm and RoPE (which leave v alone), without an MLP (consecutive
      // attentions), and with the placement overridden (post-norm attention).
      {"resformer_layers3", "scheme=resformer layers=3"},
      {"resformer_qk_rmsnorm_rope_layernorm_layers3",
       "scheme=resformer qk_norm=rmsnorm pos=rope norm=layernorm layers=3 heads=2"},
      {"resformer_nomlp_bidirectional_layers4", "scheme=resformer mlp=false causal=false layers=4"},
      {"resformer_attn_post_placement",
       "scheme=resformer layers=3 placement=\"attn: post\" norm=rmsnorm"},
      // Biases (mlp_bias, readout_bias): Delétang et al.'s encoder (post-LN, relu,
      // bidirectional, ALiBi), with several sequences so that the bias gradients sum over
      // rows of different sequences; one bias at a time; a tied readout; under nGPT, where
      // they sit before its scales s_uv and s_z; and under hyper-connections.
      {"biases_post_layernorm_relu_bidirectional_alibi",
       "mlp_bias=true readout_bias=true scheme=post norm=layernorm activation=relu "
       "causal=false pos=alibi",
       3, 7},
      {"mlp_bias_pre_rmsnorm", "mlp_bias=true"},
      {"readout_bias_tied_pre_layernorm", "readout_bias=true tied=true norm=layernorm"},
      {"biases_ngpt_l2", "mlp_bias=true readout_bias=true scheme=ngpt norm=l2"},
      {"biases_hyper_connections_rope",
       "mlp_bias=true readout_bias=true scheme=hyper_connections pos=rope"},
  };
  v.insert(v.end(), more.begin(), more.end());
  for (int k = 0; k <= 3; ++k) {
    for (const char* norm : {"layernorm", "rmsnorm"}) {
      v.push_back({"layers3_mix" + std::to_string(k) + "_" + norm,
                   "layers=3 scheme=mix mix_layers=" + std::to_string(k) + " norm=" + norm});
    }
  }
  return v;
}

class ModelGradCheckVariant : public ::testing::TestWithParam<Variant> {};

TEST_P(ModelGradCheckVariant, MatchesCentralDifferences) {
  const Variant& v = GetParam();
  const ModelConfig c = config_line(v.line, base_config());
  Model<double> m(c);
  // The option under test is in effect (not silently ignored).
  if (c.embed_norm != Toggle::automatic) {
    EXPECT_EQ(m.scheme().embed_norm, c.embed_norm == Toggle::on);
  }
  if (c.final_norm != Toggle::automatic) {
    EXPECT_EQ(m.scheme().final_norm, c.final_norm == Toggle::on);
  }
  EXPECT_EQ(m.layout().find("unembed.weight") == nullptr, c.tied);
  EXPECT_EQ(m.layout().find("pos.weight") != nullptr, c.pos == PosEncoding::learned);
  EXPECT_EQ(m.layout().find("layers.0.mlp.up.bias") != nullptr, c.mlp_bias);
  EXPECT_EQ(m.layout().find("layers.0.mlp.down.bias") != nullptr, c.mlp_bias);
  EXPECT_EQ(m.layout().find("unembed.bias") != nullptr, c.readout_bias);
  EXPECT_EQ(m.num_sublayers(), c.layers * (c.mlp ? 2 : 1));
  if (c.scheme == Scheme::mix) {  // mix(k): post-norm in layers l < k, pre-norm after
    for (int i = 0; i < m.num_sublayers(); ++i) {
      const int layer = i / c.sublayers_per_layer();
      EXPECT_EQ(m.scheme().sublayers[i].norm_post, layer < c.mix_layers) << "sublayer " << i;
      EXPECT_EQ(m.scheme().sublayers[i].norm_in, layer >= c.mix_layers) << "sublayer " << i;
    }
  }
  EXPECT_EQ(m.scheme().head_norms.any(),
            c.qk_norm != QkNorm::none || c.scheme == Scheme::hybridnorm);
  m.init(11);
  randomize_res_params(m, 13);
  randomize_scalar_norms(m, 17);
  randomize_qk_norm(m, 19);
  randomize_ngpt(m, 23);
  randomize_biases(m, 29);
  // With dropout, one fixed mask: the forward is then a fixed function of the parameters.
  if (c.dropout > 0 || c.embed_dropout > 0 || c.attn_dropout > 0) {
    m.set_dropout_key(dropout_step_key(3, 4));
  }
  const GradBatch b = make_batch(c, v.batch, v.len, 5);
  std::string worst;
  const double err = max_relative_error(m, b, v.batch, v.len, &worst);
  EXPECT_LT(err, 1e-6) << "worst tensor: " << worst;
  std::printf("worst %.2e (%s)\n", err, worst.c_str());
}

INSTANTIATE_TEST_SUITE_P(Options, ModelGradCheckVariant, ::testing::ValuesIn(variants()),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace normlab
