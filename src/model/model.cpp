#include "normlab/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/kernels/activation.hpp"
#include "core/kernels/attention.hpp"
#include "core/kernels/attention_stream.hpp"
#include "core/kernels/attnres.hpp"
#include "core/kernels/gemm.hpp"
#include "core/kernels/head_norm.hpp"
#include "core/kernels/norm.hpp"
#include "core/kernels/rope.hpp"
#include "core/parallel.hpp"
#include "normlab/errors.hpp"
#include "normlab/memory_budget.hpp"
#include "normlab/rng.hpp"

namespace normlab {

// Activations of the last forward pass, sized once per (B, T) and reused (principle 5).
template <typename T>
struct Model<T>::Workspace {
  int64_t batch = 0, len = 0;
  int fields = 1;
  std::vector<int32_t> tokens;            // (N, F)
  std::vector<T> embed_raw;               // (N, D) embeddings before the embedding norm
  std::vector<T> embed_mean, embed_rstd;  // (N)
  std::vector<T> sinusoid;                // (T, D) sinusoidal positions
  std::vector<std::vector<T>> stream;     // S + 1 buffers (N, D): input of each sublayer

  struct Sub {
    std::vector<T> u, in_mean, in_rstd;      // (N, D) normed input, (N) stats
    std::vector<T> qkv;                      // (N, 3D) attention, after RoPE
    std::vector<T> qkv_raw;                  // (N, 3D) before the head norms (when any)
    std::vector<T> head_mean, head_rstd;     // (3, N·H) their statistics
    std::vector<T> q_normed;                 // (N, D) q̂ before s_h (l2 QK-norm)
    std::vector<T> probs;                    // (B, H, T, Tp), Tp = T rounded up to 16
    std::vector<T> attn_o;                   // (N, D) heads concatenated
    std::vector<T> hidden_pre, hidden;       // (N, M) MLP before/after activation
    std::vector<T> y;                        // (N, D) f(u)
    std::vector<T> z, out_mean, out_rstd;    // (N, D) N_out(y)
    std::vector<T> r, post_mean, post_rstd;  // (N, D) residual sum before N_post
  };
  std::vector<Sub> subs;
  // Logits are computed for R rows: all N, or the rows a caller listed (the scored ones).
  bool rows_listed = false;
  std::vector<int64_t> out_rows;  // (R) when rows were listed
  int64_t R = 0;
  std::vector<T> final_in;                         // (R, D) the listed rows of the stream
  std::vector<T> final_h, final_mean, final_rstd;  // (R, D), (R)
  std::vector<T> logits_raw;                       // (R, V) before the nGPT logit scale
  std::vector<T> logits;                           // (N, V)

  // AttnRes (docs/attnres.md). Sources are the embedding stream and the sublayer records;
  // a record aliases its sublayer's z, or its r (the block's partial sum) when it continues.
  std::vector<T> source0;                   // (N, D) the embedding stream, source 0
  std::vector<const T*> sources;            // S + 1 pointers to (N, D)
  std::vector<std::vector<T>> source_rstd;  // S + 1 × (N) 1/rms of each source
  std::vector<std::vector<T>> mix_alpha;    // S + 1 × (N, K_l) weights of mixing point l
  std::vector<std::vector<T>> d_block;      // res_blocks × (N, D) dL/d(block's current record)
  std::vector<const T*> mix_src, mix_rstd;  // K_l pointers for one mixing point
  std::vector<T*> mix_dsrc;
  std::vector<std::vector<T>> d_group;  // min(res_block, S + 1) × (N, D): dx of a group's points
  std::vector<const T*> group_dx;       // the dx of each point of the current group

  // Backward scratch.
  std::vector<T> d_stream_a, d_stream_b, d_r, d_z, d_y, d_u, d_attn_o;  // (N, D)
  std::vector<T> d_qkv;                                                 // (N, 3D)
  std::vector<T> d_hidden, d_hidden_pre;                                // (N, M)
  std::vector<T> d_logits_raw;                                          // (R, V)
  std::vector<T> d_final, d_final_in;                                   // (R, D)
};

namespace {

template <typename T>
void resize(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) != n) v.assign(n, T(0));
}

template <typename T>
const T* param_ptr(const std::vector<T>& p, int64_t offset) {
  return offset < 0 ? nullptr : p.data() + offset;
}

template <typename T>
T* param_ptr(std::vector<T>& p, int64_t offset) {
  return offset < 0 ? nullptr : p.data() + offset;
}

// The scalar parameters of a norm kind, in the kernels' order (norm.hpp), with their inits:
// alpha 0.5 for dyt and derf (the papers' default), derf's shift 0, and scalenorm's scale
// sqrt(D), as in the ScaleNorm paper's code, so that the output has unit RMS at init.
struct NormScalar {
  const char* name;
  double init;
};

std::vector<NormScalar> norm_scalars(NormKind kind, int64_t D) {
  switch (kind) {
    case NormKind::dyt:
      return {{"alpha", 0.5}};
    case NormKind::derf:
      return {{"alpha", 0.5}, {"shift", 0.0}};
    case NormKind::scalenorm:
      return {{"scale", std::sqrt(static_cast<double>(D))}};
    case NormKind::layernorm:
    case NormKind::rmsnorm:
    case NormKind::standardize:
    case NormKind::l2:
    case NormKind::none:
      return {};
  }
  return {};
}

// PE[t, 2i] = sin(t / 10000^(2i/D)), PE[t, 2i+1] = cos(t / 10000^(2i/D)); out (T, D).
template <typename T>
void fill_sinusoid(int64_t len, int D, T* out) {
  for (int64_t t = 0; t < len; ++t) {
    for (int d = 0; d < D; ++d) {
      const double freq = std::pow(10000.0, -static_cast<double>(d - d % 2) / D);
      out[t * D + d] = T(d % 2 == 0 ? std::sin(t * freq) : std::cos(t * freq));
    }
  }
}

// A factor of the residual add: a constant, or a learnable parameter read as p[d · stride]
// (a vector: stride 1; a scalar: stride 0).
template <typename T>
struct Factor {
  T constant = T(1);
  const T* p = nullptr;
  int stride = 0;
  T at(int d) const { return p != nullptr ? p[d * stride] : constant; }
};

// r = a ⊙ x + b ⊙ z, or nGPT's r = x + α ⊙ (z − x) when alpha (D) is given; rows × D.
template <typename T>
void residual_combine(const T* x, const T* z, const T* alpha, Factor<T> a, Factor<T> b, T* r,
                      int64_t rows, int D);

// The factor of a resolved scale: its constant, or the learnable parameter at `offset`.
template <typename T>
Factor<T> factor(const ScaleSpec& spec, const std::vector<T>& params, int64_t offset) {
  if (offset < 0) return Factor<T>{.constant = T(spec.value)};
  return Factor<T>{.p = params.data() + offset, .stride = spec.kind == ScaleKind::vector ? 1 : 0};
}

// out = s · in over n values (out may be in).
template <typename T>
void scale_rows(const T* in, T s, T* out, int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] = s * in[k];
}

template <typename T>
void residual_combine(const T* x, const T* z, const T* alpha, Factor<T> fa, Factor<T> fb, T* r,
                      int64_t rows, int D) {
  for_row_shards(rows, [&](int64_t, int64_t n0, int64_t n1) {
    if (alpha == nullptr && fa.p == nullptr && fb.p == nullptr) {
      const T a = fa.constant, b = fb.constant;
      for (int64_t k = n0 * D; k < n1 * D; ++k) r[k] = a * x[k] + b * z[k];
      return;
    }
    if (alpha == nullptr) {
      for (int64_t n = n0; n < n1; ++n) {
        for (int d = 0; d < D; ++d) {
          const int64_t k = n * D + d;
          r[k] = fa.at(d) * x[k] + fb.at(d) * z[k];
        }
      }
      return;
    }
    for (int64_t n = n0; n < n1; ++n) {
      for (int d = 0; d < D; ++d) {
        const int64_t k = n * D + d;
        r[k] = x[k] + alpha[d] * (z[k] - x[k]);
      }
    }
  });
}

}  // namespace

template <typename T>
Model<T>::Model(const ModelConfig& config) : Model(config, LayoutOnly{}) {
  // Parameters and gradients; workspaces come later, sized by the batch.
  const double bytes = 2.0 * static_cast<double>(layout_.total()) * sizeof(T);
  check_fits_in_memory(
      bytes, fmt::format("the model's {} parameters and their gradients", layout_.total()));
  params_.assign(layout_.total(), T(0));
  grads_.assign(layout_.total(), T(0));
  ws_ = std::make_unique<Workspace>();
}

template <typename T>
Model<T>::Model(const ModelConfig& config, LayoutOnly) : config_(config) {
  validate(config_);
  scheme_ = resolve_scheme(config_);
  if (attnres()) {
    // AttnRes records z (or the partial block sum + z) unscaled and unnormalized; backward()
    // relies on it (a continuing record passes its gradient on unchanged).
    for (const SublayerSlots& s : scheme_.sublayers) {
      if (s.norm_post || s.interpolate || s.residual != ScaleSpec{} || s.branch != ScaleSpec{} ||
          s.input_scale != 1.0) {
        throw std::logic_error("AttnRes sublayers must have no post-norm, interpolation or scales");
      }
    }
  }
  build_layout();
}

double activation_bytes_estimate(const ModelConfig& c, int64_t batch, int64_t len,
                                 size_t value_bytes) {
  // An upper bound of what ensure_workspace allocates and the logits take: per attention
  // sublayer about 12 (N, D) buffers and the (B, H, T, T) probabilities, per MLP sublayer
  // 4 (N, M) and 8 (N, D), AttnRes mixtures per source, 4 (N, V) for logits and gradients.
  const double n = static_cast<double>(batch) * static_cast<double>(len);
  const double d = c.width, layers = c.layers;
  const double probs = static_cast<double>(batch) * c.heads * static_cast<double>(len) *
                       static_cast<double>(attention_probs_stride(len));
  double values = layers * (12.0 * n * d + probs);
  // Head norms: the projection before them, q̂, and 6 statistics per row and head.
  if (c.qk_norm != QkNorm::none || scheme_row(c.scheme).head_norms != HeadNormRule::none) {
    values += layers * (4.0 * n * d + 6.0 * n * c.heads);
  }
  if (c.mlp) values += layers * (4.0 * n * c.mlp_hidden() + 8.0 * n * d);
  if (c.scheme == Scheme::attnres || c.scheme == Scheme::block_attnres) {
    values += 4.0 * (layers * c.sublayers_per_layer() + 1) * (n * d + n);
  }
  values += 4.0 * n * c.vocab + 12.0 * n * d;
  return values * static_cast<double>(value_bytes);
}

double attention_scale(const ModelConfig& c) {
  if (c.qk_norm == QkNorm::l2) return c.beta;
  return c.beta / std::sqrt(static_cast<double>(c.head_dim()));
}

ParamLayout param_layout_of(const ModelConfig& config) {
  return Model<float>(config, Model<float>::LayoutOnly{}).layout();
}

template <typename T>
Model<T>::~Model() = default;

template <typename T>
NormParams Model<T>::add_norm(const std::string& prefix, bool active, NormKind kind, int64_t size) {
  NormParams n;
  n.active = active;
  n.kind = kind;
  if (!active) return n;
  const int64_t D = size > 0 ? size : config_.width;
  if (norm_has_gain(kind)) {
    n.gain = layout_.add(
        {.name = prefix + ".weight", .shape = {D}, .init = InitKind::constant, .init_value = 1.0});
  }
  if (norm_has_bias(kind)) {
    n.bias = layout_.add(
        {.name = prefix + ".bias", .shape = {D}, .init = InitKind::constant, .init_value = 0.0});
  }
  // Scalars: "<prefix>.alpha", ".shift", ".scale", shape (1), consecutive. Like the gains and
  // biases they do not decay (decay is for matrices).
  const std::vector<NormScalar> scalars = norm_scalars(kind, D);
  if (static_cast<int>(scalars.size()) != norm_scalar_count(kind)) {
    throw std::logic_error("add_norm: the scalars of norm " + to_string(kind) +
                           " disagree with the kernel's count");
  }
  for (const NormScalar& scalar : scalars) {
    const int64_t offset = layout_.add({.name = prefix + "." + scalar.name,
                                        .shape = {1},
                                        .init = InitKind::constant,
                                        .init_value = scalar.init});
    if (n.scalars < 0) n.scalars = offset;
  }
  return n;
}

// A learnable factor of the residual add (LayerScale: a vector; ReZero: a scalar), initialized
// to the placement's value and not decayed; -1 for a constant.
template <typename T>
int64_t Model<T>::add_scale(const std::string& name, const ScaleSpec& spec) {
  if (spec.kind != ScaleKind::vector && spec.kind != ScaleKind::scalar) return -1;
  const int64_t size = spec.kind == ScaleKind::vector ? config_.width : 1;
  return layout_.add(
      {.name = name, .shape = {size}, .init = InitKind::constant, .init_value = spec.value});
}

// AttnRes: a mixing point's pseudo-query (init 0: uniform weights) and the gain of the RMSNorm
// on its keys (init 1); neither decays.
template <typename T>
void Model<T>::add_res_mix(const std::string& query, const std::string& norm, SublayerParams& p) {
  const int64_t D = config_.width;
  p.res_query =
      layout_.add({.name = query, .shape = {D}, .init = InitKind::constant, .init_value = 0.0});
  p.res_key_norm.active = true;
  p.res_key_norm.gain = layout_.add(
      {.name = norm + ".weight", .shape = {D}, .init = InitKind::constant, .init_value = 1.0});
}

template <typename T>
void Model<T>::build_layout() {
  const ModelConfig& c = config_;
  const int64_t V = c.vocab, D = c.width, M = c.mlp_hidden();
  const bool ngpt = scheme_.unit_norm_weights;
  const UnitNormAxis rows = ngpt ? UnitNormAxis::last : UnitNormAxis::none;
  const UnitNormAxis cols = ngpt ? UnitNormAxis::first : UnitNormAxis::none;
  const double std = c.init_std;
  // GPT-2 scaled init of the projections that write into the residual stream; DeepNorm
  // replaces it with its own (8L)^(-1/4) on values, outputs and the MLP.
  const double residual_std =
      (c.scaled_residual_init && scheme_.gpt2_scaled_init) ? std / std::sqrt(2.0 * c.layers) : std;
  const double branch = scheme_.branch_init_scale;

  embed_ = layout_.add({.name = "embed.weight",
                        .shape = {V, D},
                        .decay = true,
                        .init_value = std,
                        .unit_norm = rows});
  if (c.pos == PosEncoding::learned) {
    pos_ = layout_.add({.name = "pos.weight",
                        .shape = {c.max_len, D},
                        .decay = true,
                        .init_value = std,
                        .unit_norm = rows});
  }
  embed_norm_ = add_norm("embed_norm", scheme_.embed_norm, c.norm);

  for (int i = 0; i < static_cast<int>(scheme_.sublayers.size()); ++i) {
    const SublayerSlots& slots = scheme_.sublayers[i];
    const int layer = i / c.sublayers_per_layer();
    const bool attention = i % c.sublayers_per_layer() == 0;
    const std::string prefix = fmt::format("layers.{}.{}", layer, attention ? "attn" : "mlp");
    SublayerParams p;
    p.is_attention = attention;
    if (attnres()) add_res_mix(prefix + ".res_query", prefix + ".res_norm", p);
    p.norm_in = add_norm(prefix + ".norm_in", slots.norm_in, slots.kind_in);
    if (attention) {
      p.w_in = layout_.add({.name = prefix + ".q.weight",
                            .shape = {D, D},
                            .decay = true,
                            .init_value = std,
                            .unit_norm = rows});
      layout_.add({.name = prefix + ".k.weight",
                   .shape = {D, D},
                   .decay = true,
                   .init_value = std,
                   .unit_norm = rows});
      layout_.add({.name = prefix + ".v.weight",
                   .shape = {D, D},
                   .decay = true,
                   .init_value = std * branch,
                   .unit_norm = rows});
      p.w_out = layout_.add({.name = prefix + ".o.weight",
                             .shape = {D, D},
                             .decay = true,
                             .init_value = residual_std * branch,
                             .unit_norm = cols});
      // Per-head norms over dh features (docs/checkpoint.md), then the l2 QK-norm's s_h (H);
      // none of them decays.
      const HeadNorms& hn = scheme_.head_norms;
      p.q_norm = add_norm(prefix + ".q_norm", hn.q, hn.kind, c.head_dim());
      p.k_norm = add_norm(prefix + ".k_norm", hn.k, hn.kind, c.head_dim());
      p.v_norm = add_norm(prefix + ".v_norm", hn.v, hn.kind, c.head_dim());
      if (hn.learned_scale) {
        p.qk_scale = layout_.add({.name = prefix + ".qk_scale",
                                  .shape = {c.heads},
                                  .init = InitKind::constant,
                                  .init_value = hn.scale_init});
      }
    } else {
      p.w_in = layout_.add({.name = prefix + ".up.weight",
                            .shape = {M, D},
                            .decay = true,
                            .init_value = std * branch,
                            .unit_norm = rows});
      p.w_out = layout_.add({.name = prefix + ".down.weight",
                             .shape = {D, M},
                             .decay = true,
                             .init_value = residual_std * branch,
                             .unit_norm = cols});
    }
    p.norm_out = add_norm(prefix + ".norm_out", slots.norm_out, slots.kind_out);
    p.norm_post = add_norm(prefix + ".norm_post", slots.norm_post, slots.kind_post);
    p.residual_scale = add_scale(prefix + ".residual_scale", slots.residual);
    p.branch_scale = add_scale(prefix + ".branch_scale", slots.branch);
    if (slots.interpolate) {
      p.alpha = layout_.add({.name = prefix + ".alpha",
                             .shape = {D},
                             .init = InitKind::constant,
                             .init_value = c.ngpt_alpha_init});
    }
    sublayers_.push_back(p);
  }
  if (attnres()) {
    SublayerParams final_mix;
    add_res_mix("final_res.query", "final_res.norm", final_mix);
    final_res_query_ = final_mix.res_query;
    final_res_norm_ = final_mix.res_key_norm;
  }
  final_norm_ = add_norm("final_norm", scheme_.final_norm, c.norm);
  if (c.tied) {
    unembed_ = embed_;
  } else {
    unembed_ = layout_.add({.name = "unembed.weight",
                            .shape = {V, D},
                            .decay = true,
                            .init_value = std,
                            .unit_norm = rows});
  }
  if (scheme_.logit_scale) {
    // nGPT's logits are cosines in [-1, 1]; a learnable per-token scale, initialized to
    // sqrt(D), lets them reach useful magnitudes (normlab choice, docs/schemes.md).
    logit_scale_ = layout_.add({.name = "logit_scale",
                                .shape = {V},
                                .init = InitKind::constant,
                                .init_value = std::sqrt(static_cast<double>(D))});
  }
}

template <typename T>
void Model<T>::init(uint64_t seed) {
  Rng rng(seed);
  for (const TensorSpec& t : layout_.tensors()) {
    T* p = params_.data() + t.offset;
    for (int64_t i = 0; i < t.size; ++i) {
      p[i] = t.init == InitKind::normal ? T(rng.normal() * t.init_value) : T(t.init_value);
    }
  }
  apply_weight_constraints();
}

template <typename T>
void Model<T>::apply_weight_constraints() {
  for (const TensorSpec& t : layout_.tensors()) {
    if (t.unit_norm == UnitNormAxis::none) continue;
    T* p = params_.data() + t.offset;
    const int64_t rows = t.shape[0], cols = t.shape[1];
    if (t.unit_norm == UnitNormAxis::last) {
      for (int64_t r = 0; r < rows; ++r) {
        T ss = 0;
        for (int64_t k = 0; k < cols; ++k) ss += p[r * cols + k] * p[r * cols + k];
        const T inv = T(1) / std::sqrt(ss + T(1e-20));
        for (int64_t k = 0; k < cols; ++k) p[r * cols + k] *= inv;
      }
    } else {
      for (int64_t k = 0; k < cols; ++k) {
        T ss = 0;
        for (int64_t r = 0; r < rows; ++r) ss += p[r * cols + k] * p[r * cols + k];
        const T inv = T(1) / std::sqrt(ss + T(1e-20));
        for (int64_t r = 0; r < rows; ++r) p[r * cols + k] *= inv;
      }
    }
  }
}

template <typename T>
void Model<T>::zero_grads() {
  std::fill(grads_.begin(), grads_.end(), T(0));
}

template <typename T>
void Model<T>::ensure_workspace(int64_t batch, int64_t len) {
  Workspace& w = *ws_;
  if (w.batch == batch && w.len == len) return;
  const ModelConfig& c = config_;
  const int64_t N = batch * len, D = c.width, M = c.mlp_hidden();
  check_fits_in_memory(
      activation_bytes_estimate(c, batch, len, sizeof(T)),
      fmt::format("activations for a batch of {} sequences of {} tokens", batch, len));
  w.batch = batch;
  w.len = len;
  if (scheme_.embed_norm) {
    resize(w.embed_raw, N * D);
    resize(w.embed_mean, N);
    resize(w.embed_rstd, N);
  }
  if (c.pos == PosEncoding::sinusoidal) {
    resize(w.sinusoid, len * D);
    fill_sinusoid(len, static_cast<int>(D), w.sinusoid.data());
  }
  const int S = num_sublayers();
  w.stream.resize(S + 1);
  for (auto& s : w.stream) resize(s, N * D);
  w.subs.resize(S);
  for (int i = 0; i < S; ++i) {
    auto& sub = w.subs[i];
    const SublayerSlots& slots = scheme_.sublayers[i];
    if (slots.norm_in) {
      resize(sub.in_mean, N);
      resize(sub.in_rstd, N);
    }
    if (slots.norm_in || slots.input_scale != 1.0) resize(sub.u, N * D);
    if (sublayers_[i].is_attention) {
      resize(sub.qkv, N * 3 * D);
      if (scheme_.head_norms.any()) {
        resize(sub.qkv_raw, N * 3 * D);
        resize(sub.head_mean, 3 * N * c.heads);
        resize(sub.head_rstd, 3 * N * c.heads);
        if (scheme_.head_norms.learned_scale) resize(sub.q_normed, N * D);
      }
      resize(sub.probs, batch * c.heads * len * attention_probs_stride(len));
      resize(sub.attn_o, N * D);
    } else {
      resize(sub.hidden_pre, N * M);
      resize(sub.hidden, N * M);
    }
    resize(sub.y, N * D);
    if (slots.norm_out) {
      resize(sub.z, N * D);
      resize(sub.out_mean, N);
      resize(sub.out_rstd, N);
    }
    if (slots.norm_post) {
      resize(sub.r, N * D);
      resize(sub.post_mean, N);
      resize(sub.post_rstd, N);
    }
    if (attnres() && scheme_.res_continues[i]) resize(sub.r, N * D);  // the partial block sum
  }
  if (attnres()) {
    resize(w.source0, N * D);
    w.sources.assign(S + 1, nullptr);
    w.source_rstd.resize(S + 1);
    w.mix_alpha.resize(S + 1);
    for (int j = 0; j <= S; ++j) {
      resize(w.source_rstd[j], N);
      resize(w.mix_alpha[j], N * static_cast<int64_t>(scheme_.res_sources[j].size()));
    }
    w.d_block.resize(scheme_.res_blocks);
    for (auto& d : w.d_block) resize(d, N * D);
    w.mix_src.resize(S + 1);
    w.mix_rstd.resize(S + 1);
    w.mix_dsrc.resize(S + 1);
    w.d_group.resize(std::min(scheme_.res_block, S + 1));
    for (auto& d : w.d_group) resize(d, N * D);
    w.group_dx.assign(w.d_group.size(), nullptr);
  }
  for (auto* v : {&w.d_stream_a, &w.d_stream_b, &w.d_r, &w.d_z, &w.d_y, &w.d_u, &w.d_attn_o}) {
    resize(*v, N * D);
  }
  resize(w.d_qkv, N * 3 * D);
  if (c.mlp) {
    resize(w.d_hidden, N * M);
    resize(w.d_hidden_pre, N * M);
  }
}

template <typename T>
void Model<T>::check_tokens(const int32_t* tokens, int64_t batch, int64_t len, int fields) const {
  const ModelConfig& c = config_;
  if (batch < 1 || len < 1) {
    throw UsageError(
        fmt::format("forward needs at least one sequence of length at least 1 "
                    "(got batch {}, length {})",
                    batch, len));
  }
  if (c.pos == PosEncoding::learned && len > c.max_len) {
    throw UsageError(fmt::format("sequence length {} exceeds max-len {} of the learned positions",
                                 len, c.max_len));
  }
  if (fields < 1) throw UsageError("forward needs at least one token field");
  for (int64_t k = 0; k < batch * len * fields; ++k) {
    if ((tokens[k] < 0 && tokens[k] != -1) || tokens[k] >= c.vocab) {
      throw UsageError(fmt::format("token {} at position {} is outside the vocabulary [0, {})",
                                   tokens[k], k / fields, c.vocab));
    }
  }
}

template <typename T>
void Model<T>::embed(const int32_t* tokens, int64_t batch, int64_t len, int fields,
                     const T* sinusoid, T* e) const {
  const int D = config_.width;
  const T* E = params_.data() + embed_;
  const T* P = param_ptr(params_, pos_);
  for_row_shards(batch * len, [&](int64_t, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const int64_t t = n % len;
      T* out = e + n * D;
      bool written = false;  // the first token's row is copied, later ones added
      for (int f = 0; f < fields; ++f) {
        const int32_t tok = tokens[n * fields + f];
        if (tok < 0) continue;
        const T* row = E + static_cast<int64_t>(tok) * D;
        if (written) {
          for (int d = 0; d < D; ++d) out[d] += row[d];
        } else {
          std::copy(row, row + D, out);
          written = true;
        }
      }
      if (!written) std::fill(out, out + D, T(0));
      if (P != nullptr) {
        for (int d = 0; d < D; ++d) out[d] += P[t * D + d];
      }
      if (sinusoid != nullptr) {
        for (int d = 0; d < D; ++d) out[d] += sinusoid[t * D + d];
      }
    }
  });
}

template <typename T>
const T* Model<T>::forward(const int32_t* tokens, int64_t batch, int64_t len, int fields,
                           const std::vector<int64_t>* rows) {
  const ModelConfig& c = config_;
  const int64_t N = batch * len;
  check_tokens(tokens, batch, len, fields);
  ensure_workspace(batch, len);
  Workspace& w = *ws_;
  const int D = c.width;
  w.fields = fields;
  w.tokens.assign(tokens, tokens + N * fields);

  // Embedding (+ positions) (N, D), then the optional embedding norm: the stream entering
  // the first sublayer, or AttnRes's source 0.
  T* embedded = attnres() ? w.source0.data() : w.stream[0].data();
  T* e = scheme_.embed_norm ? w.embed_raw.data() : embedded;
  embed(tokens, batch, len, fields, w.sinusoid.empty() ? nullptr : w.sinusoid.data(), e);
  if (scheme_.embed_norm) {
    norm_forward(embed_norm_.kind, e, param_ptr(params_, embed_norm_.gain),
                 param_ptr(params_, embed_norm_.bias), param_ptr(params_, embed_norm_.scalars),
                 embedded, w.embed_mean.data(), w.embed_rstd.data(), N, D, c.norm_eps);
  }
  if (attnres()) {
    w.sources[0] = embedded;
    res_rstd(embedded, w.source_rstd[0].data(), N, D, c.norm_eps);
  }

  // Each sublayer's input: additively the previous output (already in place), under AttnRes
  // the mixture of its point; and the final stream likewise.
  for (int i = 0; i < num_sublayers(); ++i) {
    if (attnres()) res_mix_forward_point(i, N);
    sublayer_forward(i, batch, len);
  }
  if (attnres()) res_mix_forward_point(num_sublayers(), N);

  // Only the listed rows continue to the final norm and the unembedding.
  const T* h = w.stream.back().data();
  w.rows_listed = rows != nullptr;
  w.R = rows != nullptr ? static_cast<int64_t>(rows->size()) : N;
  const int64_t R = w.R;
  if (rows != nullptr) {
    w.out_rows = *rows;
    resize(w.final_in, R * D);
    for (int64_t k = 0; k < R; ++k) {
      const int64_t n = w.out_rows[k];
      if (n < 0 || n >= N || (k > 0 && n <= w.out_rows[k - 1])) {
        throw std::logic_error("forward: rows must be ascending indices in [0, B*T)");
      }
      std::copy(h + n * D, h + (n + 1) * D, w.final_in.data() + k * D);
    }
    h = w.final_in.data();
  }
  if (scheme_.final_norm) {
    resize(w.final_h, R * D);
    resize(w.final_mean, R);
    resize(w.final_rstd, R);
    norm_forward(final_norm_.kind, h, param_ptr(params_, final_norm_.gain),
                 param_ptr(params_, final_norm_.bias), param_ptr(params_, final_norm_.scalars),
                 w.final_h.data(), w.final_mean.data(), w.final_rstd.data(), R, D, c.norm_eps);
    h = w.final_h.data();
  }
  const int64_t V = c.vocab;
  resize(w.logits_raw, R * V);
  linear_forward(h, params_.data() + unembed_, w.logits_raw.data(), R, D, V, D, V);
  if (!scheme_.logit_scale) return w.logits_raw.data();
  resize(w.logits, R * V);
  const T* s = params_.data() + logit_scale_;
  for (int64_t n = 0; n < R; ++n) {
    for (int64_t v = 0; v < V; ++v) w.logits[n * V + v] = w.logits_raw[n * V + v] * s[v];
  }
  return w.logits.data();
}

template <typename T>
void Model<T>::sublayer_forward(int i, int64_t batch, int64_t len) {
  const ModelConfig& c = config_;
  Workspace& w = *ws_;
  auto& sub = w.subs[i];
  const SublayerSlots& slots = scheme_.sublayers[i];
  const SublayerParams& p = sublayers_[i];
  const int64_t N = batch * len;
  const int D = c.width;
  const int64_t M = c.mlp_hidden();

  const T* x = w.stream[i].data();
  const T* u = x;
  if (slots.norm_in) {
    norm_forward(p.norm_in.kind, x, param_ptr(params_, p.norm_in.gain),
                 param_ptr(params_, p.norm_in.bias), param_ptr(params_, p.norm_in.scalars),
                 sub.u.data(), sub.in_mean.data(), sub.in_rstd.data(), N, D, c.norm_eps);
    u = sub.u.data();
  }
  if (slots.input_scale != 1.0) {
    scale_rows(u, T(slots.input_scale), sub.u.data(), N * D);
    u = sub.u.data();
  }

  if (p.is_attention) {
    // q|k|v = u W^T, then the per-head norms (when the scheme has them), then RoPE.
    if (scheme_.head_norms.any()) {
      linear_forward(u, params_.data() + p.w_in, sub.qkv_raw.data(), N, D, 3 * D, D, 3 * D);
      head_norms_forward(p, sub.qkv_raw.data(), sub.qkv.data(),
                         sub.q_normed.empty() ? nullptr : sub.q_normed.data(), sub.head_mean.data(),
                         sub.head_rstd.data(), N);
    } else {
      linear_forward(u, params_.data() + p.w_in, sub.qkv.data(), N, D, 3 * D, D, 3 * D);
    }
    if (c.pos == PosEncoding::rope) {
      rope_apply(sub.qkv.data(), batch, len, D, c.heads, c.rope_base, false);
    }
    const AttentionShape shape{batch, len, D, c.heads, c.causal, attention_scale(c)};
    attention_forward(shape, sub.qkv.data(), sub.attn_o.data(), sub.probs.data());
    linear_forward(sub.attn_o.data(), params_.data() + p.w_out, sub.y.data(), N, D, D, D, D);
  } else {
    linear_forward(u, params_.data() + p.w_in, sub.hidden_pre.data(), N, D, M, D, M);
    activation_forward(c.activation, sub.hidden_pre.data(), sub.hidden.data(), N * M);
    linear_forward(sub.hidden.data(), params_.data() + p.w_out, sub.y.data(), N, M, D, M, D);
  }

  const T* z = sub.y.data();
  if (slots.norm_out) {
    norm_forward(p.norm_out.kind, z, param_ptr(params_, p.norm_out.gain),
                 param_ptr(params_, p.norm_out.bias), param_ptr(params_, p.norm_out.scalars),
                 sub.z.data(), sub.out_mean.data(), sub.out_rstd.data(), N, D, c.norm_eps);
    z = sub.z.data();
  }

  if (attnres()) {
    // No residual add: z is recorded as source i + 1, added to the block's partial sum
    // (source i) when the sublayer continues a block.
    const T* record = z;
    if (scheme_.res_continues[i]) {
      residual_combine(w.sources[i], z, static_cast<const T*>(nullptr), Factor<T>{}, Factor<T>{},
                       sub.r.data(), N, D);
      record = sub.r.data();
    }
    w.sources[i + 1] = record;
    res_rstd(record, w.source_rstd[i + 1].data(), N, D, c.norm_eps);
    return;
  }
  T* r = slots.norm_post ? sub.r.data() : w.stream[i + 1].data();
  residual_combine(x, z, param_ptr(params_, p.alpha),
                   factor(slots.residual, params_, p.residual_scale),
                   factor(slots.branch, params_, p.branch_scale), r, N, D);
  if (slots.norm_post) {
    norm_forward(p.norm_post.kind, r, param_ptr(params_, p.norm_post.gain),
                 param_ptr(params_, p.norm_post.bias), param_ptr(params_, p.norm_post.scalars),
                 w.stream[i + 1].data(), sub.post_mean.data(), sub.post_rstd.data(), N, D,
                 c.norm_eps);
  }
}

template <typename T>
int64_t Model<T>::res_query_offset(int l) const {
  if (!attnres()) throw std::logic_error("res_query_offset: the scheme has no AttnRes");
  return l == num_sublayers() ? final_res_query_ : sublayers_.at(l).res_query;
}

template <typename T>
int64_t Model<T>::res_gain_offset(int l) const {
  if (!attnres()) throw std::logic_error("res_gain_offset: the scheme has no AttnRes");
  return l == num_sublayers() ? final_res_norm_.gain : sublayers_.at(l).res_key_norm.gain;
}

template <typename T>
void Model<T>::res_mix_forward_point(int l, int64_t rows) {
  Workspace& w = *ws_;
  const std::vector<int>& ids = scheme_.res_sources[l];
  const int K = static_cast<int>(ids.size());
  for (int k = 0; k < K; ++k) {
    w.mix_src[k] = w.sources[ids[k]];
    w.mix_rstd[k] = w.source_rstd[ids[k]].data();
  }
  res_mix_forward(w.mix_src.data(), w.mix_rstd.data(), K, params_.data() + res_query_offset(l),
                  params_.data() + res_gain_offset(l), w.stream[l].data(), w.mix_alpha[l].data(),
                  rows, config_.width);
}

template <typename T>
void Model<T>::res_mix_backward_point(int l, const T* dx, int64_t rows) {
  Workspace& w = *ws_;
  const int B = scheme_.res_block;
  const int first = l / B * B;  // the group's first point
  w.group_dx[l - first] = dx;
  auto point = [&](int p) {
    ResMixPoint<T> pt;
    pt.alpha = w.mix_alpha[p].data();
    pt.alpha_stride = static_cast<int64_t>(scheme_.res_sources[p].size());
    pt.x = w.stream[p].data();
    pt.dx = w.group_dx[p - first];
    pt.w = params_.data() + res_query_offset(p);
    pt.g = params_.data() + res_gain_offset(p);
    pt.dw = grads_.data() + res_query_offset(p);
    pt.dg = grads_.data() + res_gain_offset(p);
    return pt;
  };
  // Sources ids[k0 .. k1) of point l (their columns in α), for the given points.
  auto run = [&](const std::vector<int>& ids, int k0, int k1, const ResMixPoint<T>* pts, int P) {
    for (int k = k0; k < k1; ++k) {
      w.mix_src[k - k0] = w.sources[ids[k]];
      w.mix_rstd[k - k0] = w.source_rstd[ids[k]].data();
      w.mix_dsrc[k - k0] = w.d_block[scheme_.res_source_block[ids[k]]].data();
    }
    res_mix_backward(w.mix_src.data(), w.mix_rstd.data(), w.mix_dsrc.data(), k1 - k0, pts, P, rows,
                     config_.width);
  };
  const std::vector<int>& ids = scheme_.res_sources[l];
  const int K = static_cast<int>(ids.size()), shared = scheme_.res_shared[l];
  if (shared < K) {  // the partial sum: needed by the backward of the sublayer before l
    ResMixPoint<T> pt = point(l);
    pt.alpha_col = shared;
    run(ids, shared, K, &pt, 1);
  }
  if (l != first) return;
  // The group's shared sources (finished blocks), read once for all its points.
  const int last = std::min(first + B - 1, num_sublayers());
  thread_local std::vector<ResMixPoint<T>> pts;
  pts.clear();
  for (int p = first; p <= last; ++p) pts.push_back(point(p));
  run(ids, 0, shared, pts.data(), static_cast<int>(pts.size()));
}

template <typename T>
void Model<T>::backward(const T* dlogits) {
  const ModelConfig& c = config_;
  Workspace& w = *ws_;
  if (w.batch == 0) throw std::logic_error("backward() called before forward()");
  const int64_t N = w.batch * w.len;
  const int D = c.width;
  const int64_t V = c.vocab;

  const int64_t R = w.R;
  // Logit scale (nGPT): logits = raw ⊙ s.
  const T* d_raw = dlogits;
  if (scheme_.logit_scale) {
    const T* s = params_.data() + logit_scale_;
    T* ds = grads_.data() + logit_scale_;
    resize(w.d_logits_raw, R * V);
    for (int64_t n = 0; n < R; ++n) {
      for (int64_t v = 0; v < V; ++v) {
        ds[v] += dlogits[n * V + v] * w.logits_raw[n * V + v];
        w.d_logits_raw[n * V + v] = dlogits[n * V + v] * s[v];
      }
    }
    d_raw = w.d_logits_raw.data();
  }

  // Unembedding: logits_raw (R, V) = h (R, D) U^T.
  const T* h_in = w.rows_listed ? w.final_in.data() : w.stream.back().data();
  const T* h = scheme_.final_norm ? w.final_h.data() : h_in;
  w.d_final.assign(R * D, T(0));
  linear_backward(h, params_.data() + unembed_, d_raw, w.d_final.data(), grads_.data() + unembed_,
                  R, D, V, D, V);
  const T* d_h = w.d_final.data();
  if (scheme_.final_norm) {
    w.d_final_in.assign(R * D, T(0));
    norm_backward(final_norm_.kind, h_in, param_ptr(params_, final_norm_.gain),
                  param_ptr(params_, final_norm_.scalars), w.final_mean.data(), w.final_rstd.data(),
                  w.d_final.data(), w.d_final_in.data(), param_ptr(grads_, final_norm_.gain),
                  param_ptr(grads_, final_norm_.bias), param_ptr(grads_, final_norm_.scalars), R,
                  D);
    d_h = w.d_final_in.data();
  }
  T* d_cur = w.d_stream_a.data();
  T* d_next = w.d_stream_b.data();
  if (!w.rows_listed) {
    std::copy(d_h, d_h + N * D, d_cur);
  } else {
    std::fill(d_cur, d_cur + N * D, T(0));
    for (int64_t k = 0; k < R; ++k) {
      std::copy(d_h + k * D, d_h + (k + 1) * D, d_cur + w.out_rows[k] * D);
    }
  }

  // d_cur = dL/d(stream entering the final norm). Additively that is the last sublayer's
  // output. Under AttnRes it is the final mixture, whose backward adds into d_block: one
  // gradient per block, holding dL/d(the block's latest record). A record that continues a
  // block is record j + 1 = record j + z_j, so when sublayer j has read its d_out from the
  // block's buffer the buffer is already dL/d(record j) up to the contributions of mixing
  // point j, which its backward adds next.
  if (attnres()) {
    for (auto& d : w.d_block) std::fill(d.begin(), d.end(), T(0));
    res_mix_backward_point(num_sublayers(), d_cur, N);
  }
  for (int i = num_sublayers() - 1; i >= 0; --i) {
    if (attnres()) {
      // dL/dx_i goes to its slot in the group's buffers, kept until the group's first point.
      T* dx = w.d_group[i % scheme_.res_block].data();
      sublayer_backward(i, w.batch, w.len, w.d_block[scheme_.res_source_block[i + 1]].data(), dx,
                        false);
      res_mix_backward_point(i, dx, N);
      continue;
    }
    sublayer_backward(i, w.batch, w.len, d_cur, d_next, true);
    std::swap(d_cur, d_next);  // d_cur = dL/dx_i
  }

  // Embedding norm, then scatter into the embedding (and position) rows. Sequential: the
  // same token may repeat, and the order of the sums must not depend on threads.
  if (attnres()) d_cur = w.d_block[0].data();
  const T* de = d_cur;
  if (scheme_.embed_norm) {
    std::fill(d_next, d_next + N * D, T(0));
    norm_backward(embed_norm_.kind, w.embed_raw.data(), param_ptr(params_, embed_norm_.gain),
                  param_ptr(params_, embed_norm_.scalars), w.embed_mean.data(), w.embed_rstd.data(),
                  d_cur, d_next, param_ptr(grads_, embed_norm_.gain),
                  param_ptr(grads_, embed_norm_.bias), param_ptr(grads_, embed_norm_.scalars), N,
                  D);
    de = d_next;
  }
  T* dE = grads_.data() + embed_;
  T* dP = param_ptr(grads_, pos_);
  for (int64_t n = 0; n < N; ++n) {
    for (int f = 0; f < w.fields; ++f) {
      const int32_t tok = w.tokens[n * w.fields + f];
      if (tok < 0) continue;
      T* row = dE + static_cast<int64_t>(tok) * D;
      for (int d = 0; d < D; ++d) row[d] += de[n * D + d];
    }
    if (dP != nullptr) {
      T* prow = dP + (n % w.len) * D;
      for (int d = 0; d < D; ++d) prow[d] += de[n * D + d];
    }
  }
}

template <typename T>
void Model<T>::sublayer_backward(int i, int64_t batch, int64_t len, const T* d_out, T* d_in,
                                 bool residual_path) {
  const ModelConfig& c = config_;
  Workspace& w = *ws_;
  auto& sub = w.subs[i];
  const SublayerSlots& slots = scheme_.sublayers[i];
  const SublayerParams& p = sublayers_[i];
  const int64_t N = batch * len;
  const int D = c.width;
  const int64_t M = c.mlp_hidden();
  const T* x = w.stream[i].data();
  const T* z = slots.norm_out ? sub.z.data() : sub.y.data();

  // out = N_post(r)
  const T* dr = d_out;
  if (slots.norm_post) {
    std::fill(w.d_r.begin(), w.d_r.end(), T(0));
    norm_backward(p.norm_post.kind, sub.r.data(), param_ptr(params_, p.norm_post.gain),
                  param_ptr(params_, p.norm_post.scalars), sub.post_mean.data(),
                  sub.post_rstd.data(), d_out, w.d_r.data(), param_ptr(grads_, p.norm_post.gain),
                  param_ptr(grads_, p.norm_post.bias), param_ptr(grads_, p.norm_post.scalars), N,
                  D);
    dr = w.d_r.data();
  }

  // r = a ⊙ x + b ⊙ z, or r = x + α ⊙ (z − x).
  T* dz = w.d_z.data();
  const Factor<T> fa = factor(slots.residual, params_, p.residual_scale);
  const Factor<T> fb = factor(slots.branch, params_, p.branch_scale);
  const T* alpha = param_ptr(params_, p.alpha);
  if (alpha != nullptr) {
    T* dalpha = grads_.data() + p.alpha;
    for (int64_t n = 0; n < N; ++n) {  // sequential: dalpha sums over rows
      for (int d = 0; d < D; ++d) {
        const int64_t k = n * D + d;
        dalpha[d] += dr[k] * (z[k] - x[k]);
        d_in[k] = (T(1) - alpha[d]) * dr[k];
        dz[k] = alpha[d] * dr[k];
      }
    }
  } else if (fa.p == nullptr && fb.p == nullptr) {
    const T ra = residual_path ? fa.constant : T(0), b = fb.constant;
    for_row_shards(N, [&](int64_t, int64_t n0, int64_t n1) {
      for (int64_t k = n0 * D; k < n1 * D; ++k) {
        d_in[k] = ra * dr[k];
        dz[k] = b * dr[k];
      }
    });
  } else {
    // Learnable factors: da = Σ x ⊙ dr, db = Σ z ⊙ dr over rows (and features for a
    // scalar); sequential, so the sums do not depend on the thread count.
    T* da = p.residual_scale >= 0 ? grads_.data() + p.residual_scale : nullptr;
    T* db = p.branch_scale >= 0 ? grads_.data() + p.branch_scale : nullptr;
    for (int64_t n = 0; n < N; ++n) {
      for (int d = 0; d < D; ++d) {
        const int64_t k = n * D + d;
        d_in[k] = residual_path ? fa.at(d) * dr[k] : T(0);
        dz[k] = fb.at(d) * dr[k];
        if (da != nullptr) da[d * fa.stride] += x[k] * dr[k];
        if (db != nullptr) db[d * fb.stride] += z[k] * dr[k];
      }
    }
  }

  // z = N_out(y)
  T* dy = dz;
  if (slots.norm_out) {
    dy = w.d_y.data();
    std::fill(dy, dy + N * D, T(0));
    norm_backward(p.norm_out.kind, sub.y.data(), param_ptr(params_, p.norm_out.gain),
                  param_ptr(params_, p.norm_out.scalars), sub.out_mean.data(), sub.out_rstd.data(),
                  dz, dy, param_ptr(grads_, p.norm_out.gain), param_ptr(grads_, p.norm_out.bias),
                  param_ptr(grads_, p.norm_out.scalars), N, D);
  }

  // y = f(u)
  const T* u = slots.norm_in || slots.input_scale != 1.0 ? sub.u.data() : x;
  T* du = w.d_u.data();
  std::fill(du, du + N * D, T(0));
  if (p.is_attention) {
    std::fill(w.d_attn_o.begin(), w.d_attn_o.end(), T(0));
    linear_backward(sub.attn_o.data(), params_.data() + p.w_out, dy, w.d_attn_o.data(),
                    grads_.data() + p.w_out, N, D, D, D, D);
    const AttentionShape shape{batch, len, D, c.heads, c.causal, attention_scale(c)};
    attention_backward(shape, sub.qkv.data(), sub.probs.data(), w.d_attn_o.data(), w.d_qkv.data());
    if (c.pos == PosEncoding::rope) {
      rope_apply(w.d_qkv.data(), batch, len, D, c.heads, c.rope_base, true);
    }
    if (scheme_.head_norms.any()) {
      head_norms_backward(p, sub.qkv_raw.data(),
                          sub.q_normed.empty() ? nullptr : sub.q_normed.data(),
                          sub.head_mean.data(), sub.head_rstd.data(), w.d_qkv.data(), N);
    }
    linear_backward(u, params_.data() + p.w_in, w.d_qkv.data(), du, grads_.data() + p.w_in, N, D,
                    3 * D, D, 3 * D);
  } else {
    std::fill(w.d_hidden.begin(), w.d_hidden.end(), T(0));
    linear_backward(sub.hidden.data(), params_.data() + p.w_out, dy, w.d_hidden.data(),
                    grads_.data() + p.w_out, N, M, D, M, D);
    activation_backward(c.activation, sub.hidden_pre.data(), w.d_hidden.data(),
                        w.d_hidden_pre.data(), N * M);
    linear_backward(u, params_.data() + p.w_in, w.d_hidden_pre.data(), du, grads_.data() + p.w_in,
                    N, D, M, D, M);
  }

  // u = s · N_in(x); the gradient adds to the residual path's.
  if (slots.input_scale != 1.0) scale_rows(du, T(slots.input_scale), du, N * D);
  if (slots.norm_in) {
    norm_backward(p.norm_in.kind, x, param_ptr(params_, p.norm_in.gain),
                  param_ptr(params_, p.norm_in.scalars), sub.in_mean.data(), sub.in_rstd.data(), du,
                  d_in, param_ptr(grads_, p.norm_in.gain), param_ptr(grads_, p.norm_in.bias),
                  param_ptr(grads_, p.norm_in.scalars), N, D);
  } else {
    for_row_shards(N, [&](int64_t, int64_t n0, int64_t n1) {
      for (int64_t k = n0 * D; k < n1 * D; ++k) d_in[k] += du[k];
    });
  }
}

// The parts of one attention sublayer's head norms, in the order q, k, v (head_norm.hpp).
template <typename T>
void Model<T>::head_norms_forward(const SublayerParams& p, const T* raw, T* qkv, T* q_normed,
                                  T* mean, T* rstd, int64_t rows) const {
  const NormParams* norms[3] = {&p.q_norm, &p.k_norm, &p.v_norm};
  for (int part = 0; part < 3; ++part) {
    const NormParams& np = *norms[part];
    HeadNormPart<T> norm;
    if (np.active) {
      norm = {np.kind, param_ptr(params_, np.gain), param_ptr(params_, np.bias),
              param_ptr(params_, np.scalars), part == 0 ? param_ptr(params_, p.qk_scale) : nullptr};
    }
    const int64_t stats = part * rows * config_.heads;
    head_norm_forward(norm, {rows, config_.width, config_.heads, part}, raw, qkv,
                      part == 0 ? q_normed : nullptr, mean + stats, rstd + stats, config_.norm_eps);
  }
}

template <typename T>
void Model<T>::head_norms_backward(const SublayerParams& p, const T* raw, const T* q_normed,
                                   const T* mean, const T* rstd, T* d_qkv, int64_t rows) {
  const NormParams* norms[3] = {&p.q_norm, &p.k_norm, &p.v_norm};
  for (int part = 0; part < 3; ++part) {
    const NormParams& np = *norms[part];
    if (!np.active) continue;  // d_qkv's part is already the gradient of raw's
    const HeadNormPart<T> norm{np.kind, param_ptr(params_, np.gain), param_ptr(params_, np.bias),
                               param_ptr(params_, np.scalars),
                               part == 0 ? param_ptr(params_, p.qk_scale) : nullptr};
    const int64_t stats = part * rows * config_.heads;
    head_norm_backward(norm, {rows, config_.width, config_.heads, part}, raw,
                       part == 0 ? q_normed : nullptr, mean + stats, rstd + stats,
                       static_cast<const T*>(d_qkv), d_qkv, param_ptr(grads_, np.gain),
                       param_ptr(grads_, np.bias), param_ptr(grads_, np.scalars),
                       part == 0 ? param_ptr(grads_, p.qk_scale) : nullptr);
  }
}

template <typename T>
const T* Model<T>::stream(int i) const {
  return ws_->stream.at(i).data();
}

template <typename T>
const T* Model<T>::branch_output(int i) const {
  return ws_->subs.at(i).y.data();
}

template <typename T>
const T* Model<T>::branch_input(int i) const {
  const SublayerSlots& slots = scheme_.sublayers.at(i);
  return slots.norm_in || slots.input_scale != 1.0 ? ws_->subs.at(i).u.data()
                                                   : ws_->stream.at(i).data();
}

template <typename T>
const T* Model<T>::final_normed() const {
  return scheme_.final_norm && !ws_->rows_listed ? ws_->final_h.data() : nullptr;
}

template <typename T>
const T* Model<T>::branch_output_normed(int i) const {
  const auto& sub = ws_->subs.at(i);
  return scheme_.sublayers.at(i).norm_out ? sub.z.data() : sub.y.data();
}

template <typename T>
const T* Model<T>::attention_probs(int i) const {
  return ws_->subs.at(i).probs.data();
}

template <typename T>
const T* Model<T>::attention_heads(int i) const {
  return ws_->subs.at(i).attn_o.data();
}

template <typename T>
const T* Model<T>::res_weights(int l) const {
  if (!attnres()) throw std::logic_error("res_weights: the scheme has no AttnRes");
  return ws_->mix_alpha.at(l).data();
}

template <typename T>
const T* Model<T>::res_source(int j) const {
  if (!attnres()) throw std::logic_error("res_source: the scheme has no AttnRes");
  return ws_->sources.at(j);
}

template <typename T>
const T* Model<T>::res_source_rstd(int j) const {
  if (!attnres()) throw std::logic_error("res_source_rstd: the scheme has no AttnRes");
  return ws_->source_rstd.at(j).data();
}

// Buffers of forward_rows, sized for the largest N seen.
template <typename T>
struct Model<T>::EvalWorkspace {
  std::vector<T> sinusoid;              // (T, D)
  std::vector<T> embed_raw;             // (N, D)
  std::vector<T> h, h_next;             // (N, D) the stream; R rows after the last attention
  std::vector<T> u, y, z, r, gathered;  // (N, D)
  std::vector<T> x_rows;                // (R, D) the residual input of the kept rows
  std::vector<T> mean, rstd;            // (N)
  std::vector<T> qkv;                   // (N, 3D)
  std::vector<T> qkv_raw;               // (N, 3D) before the head norms (when any)
  std::vector<T> head_mean, head_rstd;  // (3, N·H)
  std::vector<T> hidden_pre, hidden;    // (N, M)
  std::vector<T> logits;                // (R, V)
  std::vector<int64_t> all_rows;        // 0 .. N−1
  // AttnRes: one buffer per block holding its latest record (partial sums are added in place,
  // which inference may do since nothing is kept for a backward), and the records' 1/rms.
  std::vector<std::vector<T>> block, block_rstd;  // res_blocks × (N, D), (N)
  std::vector<T> alpha;                           // (N, S + 1) mixture weights, scratch
  std::vector<const T*> mix_src, mix_rstd;        // K_l pointers
};

template <typename T>
const T* Model<T>::forward_rows(const int32_t* tokens, int64_t batch, int64_t len, int fields,
                                const std::vector<int64_t>& rows,
                                const SublayerObserver<T>& observer) {
  const ModelConfig& c = config_;
  check_tokens(tokens, batch, len, fields);
  const int64_t N = batch * len;
  const int64_t R = static_cast<int64_t>(rows.size());
  for (int64_t k = 0; k < R; ++k) {
    if (rows[k] < 0 || rows[k] >= N || (k > 0 && rows[k] <= rows[k - 1])) {
      throw std::logic_error("forward_rows: rows must be ascending indices in [0, B*T)");
    }
  }
  if (!eval_) eval_ = std::make_unique<EvalWorkspace>();
  EvalWorkspace& w = *eval_;
  const int D = c.width;
  const int64_t M = c.mlp_hidden(), V = c.vocab;
  auto grow = [](std::vector<T>& v, int64_t n) {
    if (static_cast<int64_t>(v.size()) < n) v.resize(n);
  };
  // Buffers grow to the rows actually used: after the last attention only R rows remain.
  grow(w.h, N * D);
  grow(w.u, N * D);
  grow(w.mean, N);
  grow(w.rstd, N);
  grow(w.qkv, N * 3 * D);
  const bool head_norms = scheme_.head_norms.any();
  if (head_norms) {
    grow(w.qkv_raw, N * 3 * D);
    grow(w.head_mean, 3 * N * c.heads);
    grow(w.head_rstd, 3 * N * c.heads);
  }
  if (scheme_.embed_norm) grow(w.embed_raw, N * D);
  grow(w.logits, R * V);
  grow(w.x_rows, R * D);
  if (static_cast<int64_t>(w.all_rows.size()) < N) {
    const int64_t old = static_cast<int64_t>(w.all_rows.size());
    w.all_rows.resize(N);
    for (int64_t n = old; n < N; ++n) w.all_rows[n] = n;
  }
  const T* sinusoid = nullptr;
  if (c.pos == PosEncoding::sinusoidal) {
    grow(w.sinusoid, len * D);
    fill_sinusoid(len, D, w.sinusoid.data());
    sinusoid = w.sinusoid.data();
  }

  auto norm = [&](const NormParams& np, const T* x, T* y, int64_t rows_n) {
    norm_forward(np.kind, x, param_ptr(params_, np.gain), param_ptr(params_, np.bias),
                 param_ptr(params_, np.scalars), y, w.mean.data(), w.rstd.data(), rows_n, D,
                 c.norm_eps);
  };

  const bool res = attnres();
  const int S = num_sublayers();
  if (res) {
    w.block.resize(scheme_.res_blocks);
    w.block_rstd.resize(scheme_.res_blocks);
    for (int b = 0; b < scheme_.res_blocks; ++b) {
      grow(w.block[b], N * D);
      grow(w.block_rstd[b], N);
    }
    grow(w.alpha, N * (S + 1));
    w.mix_src.resize(S + 1);
    w.mix_rstd.resize(S + 1);
  }
  // AttnRes: the stream w.h = the mixture of point l over `rows_n` rows. Source j lives in
  // the buffer of its block, which holds record j when point l reads it (the block's last
  // record once finished, or record l, the current partial sum).
  auto mix = [&](int l, int64_t rows_n) {
    const std::vector<int>& ids = scheme_.res_sources[l];
    const int K = static_cast<int>(ids.size());
    for (int k = 0; k < K; ++k) {
      const int b = scheme_.res_source_block[ids[k]];
      w.mix_src[k] = w.block[b].data();
      w.mix_rstd[k] = w.block_rstd[b].data();
    }
    res_mix_forward(w.mix_src.data(), w.mix_rstd.data(), K, params_.data() + res_query_offset(l),
                    params_.data() + res_gain_offset(l), w.h.data(), w.alpha.data(), rows_n, D);
  };

  T* embedded = res ? w.block[0].data() : w.h.data();
  if (scheme_.embed_norm) {
    embed(tokens, batch, len, fields, sinusoid, w.embed_raw.data());
    norm(embed_norm_, w.embed_raw.data(), embedded, N);
  } else {
    embed(tokens, batch, len, fields, sinusoid, embedded);
  }
  if (res) res_rstd(embedded, w.block_rstd[0].data(), N, D, c.norm_eps);

  int last_attention = 0;
  for (int i = 0; i < num_sublayers(); ++i) {
    if (sublayers_[i].is_attention) last_attention = i;
  }
  int64_t cur = N;  // rows in the stream: N, then R after the last attention
  const AttentionShape shape{batch, len, D, c.heads, c.causal, attention_scale(c)};
  for (int i = 0; i < num_sublayers(); ++i) {
    const SublayerSlots& slots = scheme_.sublayers[i];
    const SublayerParams& p = sublayers_[i];
    if (res) mix(i, cur);
    const T* x = w.h.data();
    const T* u = x;
    if (slots.norm_in) {
      norm(p.norm_in, x, w.u.data(), cur);
      u = w.u.data();
    }
    if (slots.input_scale != 1.0) {
      scale_rows(u, T(slots.input_scale), w.u.data(), cur * D);
      u = w.u.data();
    }
    int64_t out_rows = cur;
    if (p.is_attention) {
      // As in the training forward: the projection, the per-head norms, RoPE (cur = N here).
      if (head_norms) {
        linear_forward(u, params_.data() + p.w_in, w.qkv_raw.data(), cur, D, 3 * D, D, 3 * D);
        head_norms_forward(p, w.qkv_raw.data(), w.qkv.data(), nullptr, w.head_mean.data(),
                           w.head_rstd.data(), cur);
      } else {
        linear_forward(u, params_.data() + p.w_in, w.qkv.data(), cur, D, 3 * D, D, 3 * D);
      }
      if (c.pos == PosEncoding::rope) {
        rope_apply(w.qkv.data(), batch, len, D, c.heads, c.rope_base, false);
      }
      const bool last = i == last_attention;
      const int64_t* wanted = last ? rows.data() : w.all_rows.data();
      out_rows = last ? R : N;
      grow(w.gathered, out_rows * D);
      grow(w.y, out_rows * D);
      attention_stream(shape, w.qkv.data(), wanted, out_rows, w.gathered.data());
      linear_forward(w.gathered.data(), params_.data() + p.w_out, w.y.data(), out_rows, D, D, D, D);
      if (last) {
        // The residual input of the kept rows only, from here on the stream has R rows.
        for (int64_t k = 0; k < R; ++k) {
          std::copy(x + rows[k] * D, x + (rows[k] + 1) * D, w.x_rows.data() + k * D);
        }
        x = w.x_rows.data();
      }
      if (last && res) {
        // AttnRes: the sources written so far keep only the kept rows, in place (rows are
        // ascending, so row rows[k] ≥ k is never overwritten before it is read).
        for (int b = 0; b <= scheme_.res_source_block[i]; ++b) {
          for (int64_t k = 0; k < R; ++k) {
            std::copy(w.block[b].data() + rows[k] * D, w.block[b].data() + (rows[k] + 1) * D,
                      w.block[b].data() + k * D);
            w.block_rstd[b][k] = w.block_rstd[b][rows[k]];
          }
        }
      }
    } else {
      grow(w.hidden_pre, cur * M);
      grow(w.hidden, cur * M);
      grow(w.y, cur * D);
      linear_forward(u, params_.data() + p.w_in, w.hidden_pre.data(), cur, D, M, D, M);
      activation_forward(c.activation, w.hidden_pre.data(), w.hidden.data(), cur * M);
      linear_forward(w.hidden.data(), params_.data() + p.w_out, w.y.data(), cur, M, D, M, D);
    }
    const T* z = w.y.data();
    if (slots.norm_out) {
      grow(w.z, out_rows * D);
      norm(p.norm_out, w.y.data(), w.z.data(), out_rows);
      z = w.z.data();
    }
    const T* out = nullptr;  // what the sublayer leaves: the stream, or under AttnRes its record
    if (res) {
      // Record i + 1 = z, or the block's partial sum + z, in its block's buffer.
      const int b = scheme_.res_source_block[i + 1];
      T* record = w.block[b].data();
      if (scheme_.res_continues[i]) {
        residual_combine(static_cast<const T*>(record), z, static_cast<const T*>(nullptr),
                         Factor<T>{}, Factor<T>{}, record, out_rows, D);
      } else {
        std::copy(z, z + out_rows * D, record);
      }
      res_rstd(static_cast<const T*>(record), w.block_rstd[b].data(), out_rows, D, c.norm_eps);
      out = record;
    } else {
      grow(w.h_next, out_rows * D);
      if (slots.norm_post) grow(w.r, out_rows * D);
      T* r = slots.norm_post ? w.r.data() : w.h_next.data();
      residual_combine(x, z, param_ptr(params_, p.alpha),
                       factor(slots.residual, params_, p.residual_scale),
                       factor(slots.branch, params_, p.branch_scale), r, out_rows, D);
      if (slots.norm_post) norm(p.norm_post, r, w.h_next.data(), out_rows);
      out = w.h_next.data();
    }
    if (observer) {
      SublayerTrace<T> t;
      t.index = i;
      t.is_attention = p.is_attention;
      t.batch = batch;
      t.len = len;
      t.rows = out_rows;
      t.row_ids = out_rows == N ? w.all_rows.data() : rows.data();
      t.input = x;
      t.qkv = p.is_attention ? w.qkv.data() : nullptr;
      t.heads = p.is_attention ? w.gathered.data() : nullptr;
      t.branch = w.y.data();
      t.branch_normed = z;
      t.output = out;
      observer(t);
    }
    if (!res) std::swap(w.h, w.h_next);  // AttnRes: the next mixture overwrites w.h
    cur = out_rows;
  }

  if (res) mix(S, cur);
  const T* h = w.h.data();
  if (scheme_.final_norm) {
    norm(final_norm_, h, w.u.data(), cur);
    h = w.u.data();
  }
  linear_forward(h, params_.data() + unembed_, w.logits.data(), R, D, V, D, V);
  if (scheme_.logit_scale) {
    const T* s = params_.data() + logit_scale_;
    for (int64_t k = 0; k < R; ++k) {
      for (int64_t v = 0; v < V; ++v) w.logits[k * V + v] *= s[v];
    }
  }
  return w.logits.data();
}

template class Model<float>;
template class Model<double>;

}  // namespace normlab
