// The forward of one sublayer (docs/schemes.md, "The block"):
//   u = s · N_in(x),  y = f(u),  z = N_out(y),  out = N_post(a ⊙ x + b ⊙ z)
// (nGPT: out = N_post(x̂ + |α| ⊙ (z − x̂)), x̂ = N_x(x), and its scales inside f, ngpt.hpp)
// with f attention or the MLP (two streams: f reads v and the add x̂, residual/two_streams.cpp).
// Training and inference run this same code; they differ in their buffers and in how attention is
// computed (sublayer_buffers.hpp).
//
// Letters: B batch, T length, N = B·T rows, D width, H heads, M MLP hidden width.
#include <stdexcept>

#include "core/kernels/activation.hpp"
#include "core/kernels/attention.hpp"
#include "core/kernels/attention_stream.hpp"
#include "core/kernels/attnres.hpp"
#include "core/kernels/gemm.hpp"
#include "core/kernels/head_norm.hpp"
#include "core/kernels/norm.hpp"
#include "core/kernels/rope.hpp"
#include "model/attention_shape.hpp"
#include "model/buffers.hpp"
#include "model/ngpt.hpp"
#include "model/residual_add.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

template <typename T>
const T* Model<T>::branch_forward(int i, int64_t batch, int64_t len, const T* x, int64_t rows,
                                  const SublayerBuffers<T>& b,
                                  const AttentionStrategy<T>& attention) const {
  const ModelConfig& c = config_;
  const SublayerSlots& slots = scheme_.sublayers[i];
  const SublayerParams& p = sublayers_[i];
  const int D = c.width;
  const int64_t M = c.mlp_hidden();

  // Hook names: "blocks.l." and the sublayer's kind, its norms TransformerLens's ln1 / ln2
  // (input), ln1_post / ln2_post (output) and normlab's ln1_resid / ln2_resid (after the add).
  const std::string block = hooks_ != nullptr ? hook_block(i) : std::string();
  const std::string kind = hooks_ != nullptr ? hook_kind(i) : std::string();
  const char* ln = p.is_attention ? "ln1" : "ln2";
  const T* u = x;
  if (slots.norm_in) {
    norm_forward(norm_weights(params_, p.norm_in), x, b.u, {b.in_mean, b.in_rstd}, {rows, D},
                 c.norm_eps);
    if (hooks_ != nullptr) offer_norm(block + ln, p.norm_in, x, b.u, b.in_mean, b.in_rstd, rows);
    u = b.u;
  }
  if (slots.input_scale != 1.0) {
    scale_rows(u, T(slots.input_scale), b.u, rows * D);
    u = b.u;
  }
  if (hooks_ != nullptr && hooks_->wants(block + kind + ".hook_in")) {
    if (u == x) {  // f reads the stream itself: the hook changes a copy
      hooked_inputs_.at(i).assign(x, x + rows * D);
      u = hooked_inputs_[i].data();
    }
    offer(block + kind + ".hook_in", const_cast<T*>(u), rows, {D});
  }

  int64_t out_rows = rows;
  if (p.is_attention) {
    if (rows != batch * len) throw std::logic_error("branch_forward: attention needs every row");
    // q|k|v = u W^T, then the per-head norms (when the scheme has them), then RoPE; nGPT
    // normalizes q and k after RoPE and scales them by s_qk.
    if (scheme_.sphere_qk) {
      linear_forward(u, params_.data() + p.w_in, b.qkv_raw, {.rows = rows, .in = D, .out = 3 * D});
      if (c.pos == PosEncoding::rope) {
        rope_apply(b.qkv_raw, {batch, len, D, c.heads}, *b.rope, Rotation::forward);
      }
      sphere_qk_forward(static_cast<const T*>(b.qkv_raw), params_.data() + p.s_qk,
                        T(ngpt_scales(c).s_qk.factor), b.qkv, b.head_rstd, rows, D, c.heads,
                        c.norm_eps);
    } else if (scheme_.head_norms.any()) {
      linear_forward(u, params_.data() + p.w_in, b.qkv_raw, {.rows = rows, .in = D, .out = 3 * D});
      head_norms_forward(p, b.qkv_raw, b.qkv, b.q_normed, b.head_mean, b.head_rstd, rows);
    } else {
      linear_forward(u, params_.data() + p.w_in, b.qkv, {.rows = rows, .in = D, .out = 3 * D});
    }
    if (c.pos == PosEncoding::rope && !scheme_.sphere_qk) {
      rope_apply(b.qkv, {batch, len, D, c.heads}, *b.rope, Rotation::forward);
    }
    b.qkv_hook->forward(i, b.qkv, rows);
    if (hooks_ != nullptr) offer_qkv(i, b.qkv);
    const AttentionShape shape = attention_shape(c, batch, len);
    RelativeLogits<T> relative_terms;
    const RelativeLogits<T>* relative = nullptr;
    if (c.pos == PosEncoding::relative) {
      relative_terms = relative_logits(p, b, len);
      relative = &relative_terms;
    }
    if (attention.streams) {
      out_rows = attention.query_count;
      attention_stream(shape, b.qkv, attention.query_rows, out_rows, b.attn_o, relative);
    } else {  // the training forward
      AttentionDropout drop;
      const AttentionDropout* dropout = attention_dropout(i, drop) ? &drop : nullptr;
      attention_forward(shape, b.qkv, b.attn_o, attention.probs, relative, dropout);
      if (hooks_ != nullptr) offer_attention(i, b.qkv, attention.probs, b.attn_o, relative);
    }
    linear_forward(b.attn_o, params_.data() + p.w_out, b.y, {.rows = out_rows, .in = D, .out = D});
  } else {
    // mlp_bias: the bias is part of the projection, W u + b (under nGPT before s_uv).
    const LinearShape up{.rows = rows, .in = D, .out = M};
    if (scheme_.mlp_scale) {  // nGPT: the pre-activation times s_uv (in place without a buffer)
      T* raw = b.hidden_raw != nullptr ? b.hidden_raw : b.hidden_pre;
      linear_forward(u, params_.data() + p.w_in, raw, up);
      if (p.b_in >= 0) bias_forward(raw, params_.data() + p.b_in, up);
      column_scale_forward(static_cast<const T*>(raw), params_.data() + p.s_uv,
                           T(ngpt_scales(c).s_uv.factor), b.hidden_pre, rows, M);
    } else {
      linear_forward(u, params_.data() + p.w_in, b.hidden_pre, up);
      if (p.b_in >= 0) bias_forward(b.hidden_pre, params_.data() + p.b_in, up);
    }
    if (hooks_ != nullptr) offer(block + "mlp.hook_pre", b.hidden_pre, rows, {M});
    activation_forward(c.activation, b.hidden_pre, b.hidden, rows * M);
    if (hooks_ != nullptr) offer(block + "mlp.hook_post", b.hidden, rows, {M});
    linear_forward(b.hidden, params_.data() + p.w_out, b.y, {.rows = rows, .in = M, .out = D});
    if (p.b_out >= 0) {
      bias_forward(b.y, params_.data() + p.b_out, {.rows = rows, .in = M, .out = D});
    }
  }
  if (hooks_ != nullptr) offer(block + "hook_" + kind + "_out", b.y, out_rows, {D});

  T* z = b.y;
  if (slots.norm_out) {
    norm_forward(norm_weights(params_, p.norm_out), b.y, b.z, {b.out_mean, b.out_rstd},
                 {out_rows, D}, c.norm_eps);
    if (hooks_ != nullptr) {
      offer_norm(block + ln + "_post", p.norm_out, b.y, b.z, b.out_mean, b.out_rstd, out_rows);
    }
    z = b.z;
  }
  if (hooks_ != nullptr) offer(block + "hook_" + kind + "_out_normed", z, out_rows, {D});
  return z;
}

template <typename T>
RelativeLogits<T> Model<T>::relative_logits(const SublayerParams& p, const SublayerBuffers<T>& b,
                                            int64_t len) const {
  const int D = config_.width;
  // r = p W_R^T: (2T − 1, D) keys, one per distance δ = i − j.
  linear_forward(b.rel_table, params_.data() + p.rel_w, b.rel_keys,
                 {.rows = relative_rows(len), .in = D, .out = D});
  return {params_.data() + p.rel_u, params_.data() + p.rel_v, b.rel_keys};
}

template <typename T>
void Model<T>::add_forward(int i, const T* x, const T* z, const SublayerBuffers<T>& b, T* out,
                           int64_t rows) const {
  const SublayerSlots& slots = scheme_.sublayers[i];
  const SublayerParams& p = sublayers_[i];
  const int D = config_.width;
  T* r = slots.norm_post ? b.r : out;
  if (slots.interpolate) {  // nGPT: r = N_x(x) + |α| f ⊙ (z − N_x(x))
    norm_forward(norm_weights(params_, p.x_norm), x, b.xhat, {b.x_mean, b.x_rstd}, {rows, D},
                 config_.norm_eps);
    ngpt_interpolate(static_cast<const T*>(b.xhat), z, param_ptr(params_, p.alpha),
                     T(ngpt_scales(config_).alpha.factor), r, rows, D);
  } else {
    residual_add(x, z, r, rows, D, factor(slots.residual, params_, p.residual_scale),
                 factor(slots.branch, params_, p.branch_scale));
  }
  if (slots.norm_post) {
    norm_forward(norm_weights(params_, p.norm_post), static_cast<const T*>(r), out,
                 {b.post_mean, b.post_rstd}, {rows, D}, config_.norm_eps);
    if (hooks_ != nullptr) {
      offer_norm(hook_block(i) + (p.is_attention ? "ln1_resid" : "ln2_resid"), p.norm_post, r, out,
                 b.post_mean, b.post_rstd, rows);
    }
  }
}

template <typename T>
const SublayerBuffers<T>& Model<T>::train_buffers(int i) const {
  return ws_->subs[i];
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

// This file's members for both scalar types (the class itself is instantiated in model.cpp).
template const float* Model<float>::branch_forward(int, int64_t, int64_t, const float*, int64_t,
                                                   const SublayerBuffers<float>&,
                                                   const AttentionStrategy<float>&) const;
template const double* Model<double>::branch_forward(int, int64_t, int64_t, const double*, int64_t,
                                                     const SublayerBuffers<double>&,
                                                     const AttentionStrategy<double>&) const;
template RelativeLogits<float> Model<float>::relative_logits(const SublayerParams&,
                                                             const SublayerBuffers<float>&,
                                                             int64_t) const;
template RelativeLogits<double> Model<double>::relative_logits(const SublayerParams&,
                                                               const SublayerBuffers<double>&,
                                                               int64_t) const;
template void Model<float>::add_forward(int, const float*, const float*,
                                        const SublayerBuffers<float>&, float*, int64_t) const;
template void Model<double>::add_forward(int, const double*, const double*,
                                         const SublayerBuffers<double>&, double*, int64_t) const;
template const SublayerBuffers<float>& Model<float>::train_buffers(int) const;
template const SublayerBuffers<double>& Model<double>::train_buffers(int) const;
template void Model<float>::head_norms_forward(const SublayerParams&, const float*, float*, float*,
                                               float*, float*, int64_t) const;
template void Model<double>::head_norms_forward(const SublayerParams&, const double*, double*,
                                                double*, double*, double*, int64_t) const;

}  // namespace normlab
