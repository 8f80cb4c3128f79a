#include "normlab/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/kernels/activation.hpp"
#include "core/kernels/attention.hpp"
#include "core/kernels/attention_stream.hpp"
#include "core/kernels/gemm.hpp"
#include "core/kernels/norm.hpp"
#include "core/kernels/rope.hpp"
#include "core/parallel.hpp"
#include "normlab/errors.hpp"
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

// r = a·x + b·z, or nGPT's r = x + α ⊙ (z − x) when alpha (D) is given; rows × D.
template <typename T>
void residual_combine(const T* x, const T* z, const T* alpha, T a, T b, T* r, int64_t rows, int D);

// Runs fn(begin, end) over row shards of [0, rows) in parallel.
template <typename F>
void for_rows(int64_t rows, F&& fn) {
  parallel_for(shard_count(rows),
               [&](int64_t s) { fn(s * kRowShard, std::min(rows, (s + 1) * kRowShard)); });
}

template <typename T>
void residual_combine(const T* x, const T* z, const T* alpha, T a, T b, T* r, int64_t rows, int D) {
  for_rows(rows, [&](int64_t n0, int64_t n1) {
    for (int64_t k = n0 * D; k < n1 * D; ++k) {
      if (alpha != nullptr) {
        r[k] = x[k] + alpha[k % D] * (z[k] - x[k]);
      } else {
        r[k] = a * x[k] + b * z[k];
      }
    }
  });
}

}  // namespace

template <typename T>
Model<T>::Model(const ModelConfig& config) : config_(config) {
  validate(config_);
  if (config_.scheme == Scheme::attnres || config_.scheme == Scheme::block_attnres) {
    throw UsageError("scheme " + to_string(config_.scheme) + " is not implemented yet");
  }
  scheme_ = resolve_scheme(config_);
  build_layout();
  params_.assign(layout_.total(), T(0));
  grads_.assign(layout_.total(), T(0));
  ws_ = std::make_unique<Workspace>();
}

template <typename T>
Model<T>::~Model() = default;

template <typename T>
NormParams Model<T>::add_norm(const std::string& prefix, bool active) {
  NormParams n;
  n.active = active;
  if (!active) return n;
  const int64_t D = config_.width;
  if (norm_has_gain(config_.norm)) {
    n.gain = layout_.add(
        {.name = prefix + ".weight", .shape = {D}, .init = InitKind::constant, .init_value = 1.0});
  }
  if (norm_has_bias(config_.norm)) {
    n.bias = layout_.add(
        {.name = prefix + ".bias", .shape = {D}, .init = InitKind::constant, .init_value = 0.0});
  }
  return n;
}

template <typename T>
void Model<T>::build_layout() {
  const ModelConfig& c = config_;
  const int64_t V = c.vocab, D = c.width, M = c.mlp_hidden();
  const bool ngpt = scheme_.unit_norm_weights;
  const UnitNormAxis rows = ngpt ? UnitNormAxis::last : UnitNormAxis::none;
  const UnitNormAxis cols = ngpt ? UnitNormAxis::first : UnitNormAxis::none;
  const double std = c.init_std;
  const bool deepnorm = c.scheme == Scheme::deepnorm;
  // GPT-2 scaled init of the projections that write into the residual stream; DeepNorm
  // replaces it with its own (8L)^(-1/4) on values, outputs and the MLP.
  const double residual_std =
      (c.scaled_residual_init && !deepnorm) ? std / std::sqrt(2.0 * c.layers) : std;
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
  embed_norm_ = add_norm("embed_norm", scheme_.embed_norm);

  for (int i = 0; i < static_cast<int>(scheme_.sublayers.size()); ++i) {
    const SublayerSlots& slots = scheme_.sublayers[i];
    const int layer = i / c.sublayers_per_layer();
    const bool attention = i % c.sublayers_per_layer() == 0;
    const std::string prefix = fmt::format("layers.{}.{}", layer, attention ? "attn" : "mlp");
    SublayerParams p;
    p.is_attention = attention;
    p.norm_in = add_norm(prefix + ".norm_in", slots.norm_in);
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
    p.norm_out = add_norm(prefix + ".norm_out", slots.norm_out);
    p.norm_post = add_norm(prefix + ".norm_post", slots.norm_post);
    if (slots.interpolate) {
      p.alpha = layout_.add({.name = prefix + ".alpha",
                             .shape = {D},
                             .init = InitKind::constant,
                             .init_value = c.ngpt_alpha_init});
    }
    sublayers_.push_back(p);
  }
  final_norm_ = add_norm("final_norm", scheme_.final_norm);
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
      resize(sub.u, N * D);
      resize(sub.in_mean, N);
      resize(sub.in_rstd, N);
    }
    if (sublayers_[i].is_attention) {
      resize(sub.qkv, N * 3 * D);
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
  for_rows(batch * len, [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const int64_t t = n % len;
      T* out = e + n * D;
      std::fill(out, out + D, T(0));
      for (int f = 0; f < fields; ++f) {
        const int32_t tok = tokens[n * fields + f];
        if (tok < 0) continue;
        const T* row = E + static_cast<int64_t>(tok) * D;
        for (int d = 0; d < D; ++d) out[d] += row[d];
      }
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

  // Embedding (+ positions) (N, D), then the optional embedding norm.
  T* e = scheme_.embed_norm ? w.embed_raw.data() : w.stream[0].data();
  embed(tokens, batch, len, fields, w.sinusoid.empty() ? nullptr : w.sinusoid.data(), e);
  if (scheme_.embed_norm) {
    norm_forward(c.norm, e, param_ptr(params_, embed_norm_.gain),
                 param_ptr(params_, embed_norm_.bias), w.stream[0].data(), w.embed_mean.data(),
                 w.embed_rstd.data(), N, D, c.norm_eps);
  }

  for (int i = 0; i < num_sublayers(); ++i) sublayer_forward(i, batch, len);

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
    norm_forward(c.norm, h, param_ptr(params_, final_norm_.gain),
                 param_ptr(params_, final_norm_.bias), w.final_h.data(), w.final_mean.data(),
                 w.final_rstd.data(), R, D, c.norm_eps);
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
    norm_forward(c.norm, x, param_ptr(params_, p.norm_in.gain), param_ptr(params_, p.norm_in.bias),
                 sub.u.data(), sub.in_mean.data(), sub.in_rstd.data(), N, D, c.norm_eps);
    u = sub.u.data();
  }

  if (p.is_attention) {
    linear_forward(u, params_.data() + p.w_in, sub.qkv.data(), N, D, 3 * D, D, 3 * D);
    if (c.pos == PosEncoding::rope) {
      rope_apply(sub.qkv.data(), batch, len, D, c.heads, c.rope_base, false);
    }
    const AttentionShape shape{
        batch, len, D, c.heads, c.causal, c.beta / std::sqrt(static_cast<double>(c.head_dim()))};
    attention_forward(shape, sub.qkv.data(), sub.attn_o.data(), sub.probs.data());
    linear_forward(sub.attn_o.data(), params_.data() + p.w_out, sub.y.data(), N, D, D, D, D);
  } else {
    linear_forward(u, params_.data() + p.w_in, sub.hidden_pre.data(), N, D, M, D, M);
    activation_forward(c.activation, sub.hidden_pre.data(), sub.hidden.data(), N * M);
    linear_forward(sub.hidden.data(), params_.data() + p.w_out, sub.y.data(), N, M, D, M, D);
  }

  const T* z = sub.y.data();
  if (slots.norm_out) {
    norm_forward(c.norm, z, param_ptr(params_, p.norm_out.gain),
                 param_ptr(params_, p.norm_out.bias), sub.z.data(), sub.out_mean.data(),
                 sub.out_rstd.data(), N, D, c.norm_eps);
    z = sub.z.data();
  }

  T* r = slots.norm_post ? sub.r.data() : w.stream[i + 1].data();
  residual_combine(x, z, param_ptr(params_, p.alpha), T(slots.residual_scale),
                   T(slots.branch_scale), r, N, D);
  if (slots.norm_post) {
    norm_forward(c.norm, r, param_ptr(params_, p.norm_post.gain),
                 param_ptr(params_, p.norm_post.bias), w.stream[i + 1].data(), sub.post_mean.data(),
                 sub.post_rstd.data(), N, D, c.norm_eps);
  }
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
    norm_backward(c.norm, h_in, param_ptr(params_, final_norm_.gain), w.final_mean.data(),
                  w.final_rstd.data(), w.d_final.data(), w.d_final_in.data(),
                  param_ptr(grads_, final_norm_.gain), param_ptr(grads_, final_norm_.bias), R, D);
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

  for (int i = num_sublayers() - 1; i >= 0; --i) {
    sublayer_backward(i, w.batch, w.len, d_cur, d_next);
    std::swap(d_cur, d_next);
  }

  // Embedding norm, then scatter into the embedding (and position) rows. Sequential: the
  // same token may repeat, and the order of the sums must not depend on threads.
  const T* de = d_cur;
  if (scheme_.embed_norm) {
    std::fill(d_next, d_next + N * D, T(0));
    norm_backward(c.norm, w.embed_raw.data(), param_ptr(params_, embed_norm_.gain),
                  w.embed_mean.data(), w.embed_rstd.data(), d_cur, d_next,
                  param_ptr(grads_, embed_norm_.gain), param_ptr(grads_, embed_norm_.bias), N, D);
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
void Model<T>::sublayer_backward(int i, int64_t batch, int64_t len, T* d_out, T* d_in) {
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
  T* dr = d_out;
  if (slots.norm_post) {
    dr = w.d_r.data();
    std::fill(dr, dr + N * D, T(0));
    norm_backward(c.norm, sub.r.data(), param_ptr(params_, p.norm_post.gain), sub.post_mean.data(),
                  sub.post_rstd.data(), d_out, dr, param_ptr(grads_, p.norm_post.gain),
                  param_ptr(grads_, p.norm_post.bias), N, D);
  }

  // r = a·x + b·z, or r = x + α ⊙ (z − x).
  T* dz = w.d_z.data();
  const T a = T(slots.residual_scale), b = T(slots.branch_scale);
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
  } else {
    for_rows(N, [&](int64_t n0, int64_t n1) {
      for (int64_t k = n0 * D; k < n1 * D; ++k) {
        d_in[k] = a * dr[k];
        dz[k] = b * dr[k];
      }
    });
  }

  // z = N_out(y)
  T* dy = dz;
  if (slots.norm_out) {
    dy = w.d_y.data();
    std::fill(dy, dy + N * D, T(0));
    norm_backward(c.norm, sub.y.data(), param_ptr(params_, p.norm_out.gain), sub.out_mean.data(),
                  sub.out_rstd.data(), dz, dy, param_ptr(grads_, p.norm_out.gain),
                  param_ptr(grads_, p.norm_out.bias), N, D);
  }

  // y = f(u)
  const T* u = slots.norm_in ? sub.u.data() : x;
  T* du = w.d_u.data();
  std::fill(du, du + N * D, T(0));
  if (p.is_attention) {
    std::fill(w.d_attn_o.begin(), w.d_attn_o.end(), T(0));
    linear_backward(sub.attn_o.data(), params_.data() + p.w_out, dy, w.d_attn_o.data(),
                    grads_.data() + p.w_out, N, D, D, D, D);
    const AttentionShape shape{
        batch, len, D, c.heads, c.causal, c.beta / std::sqrt(static_cast<double>(c.head_dim()))};
    attention_backward(shape, sub.qkv.data(), sub.probs.data(), w.d_attn_o.data(), w.d_qkv.data());
    if (c.pos == PosEncoding::rope) {
      rope_apply(w.d_qkv.data(), batch, len, D, c.heads, c.rope_base, true);
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

  // u = N_in(x); the gradient adds to the residual path's.
  if (slots.norm_in) {
    norm_backward(c.norm, x, param_ptr(params_, p.norm_in.gain), sub.in_mean.data(),
                  sub.in_rstd.data(), du, d_in, param_ptr(grads_, p.norm_in.gain),
                  param_ptr(grads_, p.norm_in.bias), N, D);
  } else {
    for_rows(N, [&](int64_t n0, int64_t n1) {
      for (int64_t k = n0 * D; k < n1 * D; ++k) d_in[k] += du[k];
    });
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
  std::vector<T> hidden_pre, hidden;    // (N, M)
  std::vector<T> logits;                // (R, V)
  std::vector<int64_t> all_rows;        // 0 .. N−1
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
    norm_forward(c.norm, x, param_ptr(params_, np.gain), param_ptr(params_, np.bias), y,
                 w.mean.data(), w.rstd.data(), rows_n, D, c.norm_eps);
  };

  if (scheme_.embed_norm) {
    embed(tokens, batch, len, fields, sinusoid, w.embed_raw.data());
    norm(embed_norm_, w.embed_raw.data(), w.h.data(), N);
  } else {
    embed(tokens, batch, len, fields, sinusoid, w.h.data());
  }

  int last_attention = 0;
  for (int i = 0; i < num_sublayers(); ++i) {
    if (sublayers_[i].is_attention) last_attention = i;
  }
  int64_t cur = N;  // rows in the stream: N, then R after the last attention
  const AttentionShape shape{
      batch, len, D, c.heads, c.causal, c.beta / std::sqrt(static_cast<double>(c.head_dim()))};
  for (int i = 0; i < num_sublayers(); ++i) {
    const SublayerSlots& slots = scheme_.sublayers[i];
    const SublayerParams& p = sublayers_[i];
    const T* x = w.h.data();
    const T* u = x;
    if (slots.norm_in) {
      norm(p.norm_in, x, w.u.data(), cur);
      u = w.u.data();
    }
    int64_t out_rows = cur;
    if (p.is_attention) {
      linear_forward(u, params_.data() + p.w_in, w.qkv.data(), cur, D, 3 * D, D, 3 * D);
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
    } else {
      grow(w.hidden_pre, cur * M);
      grow(w.hidden, cur * M);
      grow(w.y, cur * D);
      linear_forward(u, params_.data() + p.w_in, w.hidden_pre.data(), cur, D, M, D, M);
      activation_forward(c.activation, w.hidden_pre.data(), w.hidden.data(), cur * M);
      linear_forward(w.hidden.data(), params_.data() + p.w_out, w.y.data(), cur, M, D, M, D);
    }
    const T* z = w.y.data();
    grow(w.h_next, out_rows * D);
    if (slots.norm_out) {
      grow(w.z, out_rows * D);
      norm(p.norm_out, w.y.data(), w.z.data(), out_rows);
      z = w.z.data();
    }
    if (slots.norm_post) grow(w.r, out_rows * D);
    T* r = slots.norm_post ? w.r.data() : w.h_next.data();
    residual_combine(x, z, param_ptr(params_, p.alpha), T(slots.residual_scale),
                     T(slots.branch_scale), r, out_rows, D);
    if (slots.norm_post) norm(p.norm_post, r, w.h_next.data(), out_rows);
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
      t.output = w.h_next.data();
      observer(t);
    }
    std::swap(w.h, w.h_next);
    cur = out_rows;
  }

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
