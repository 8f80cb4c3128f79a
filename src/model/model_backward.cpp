// The training backward: from dL/dlogits through the unembedding, the final norm, each
// sublayer in reverse (its add, output norm, branch and input norm; AttnRes's mixing points;
// the second stream, residual/two_streams.cpp) to the embeddings. Each step is the derivative of
// its forward in sublayer_forward.cpp and model.cpp; the finite-difference tests check them in
// double.
//
// Letters: B batch, T length, N = B·T rows, R listed rows, D width, H heads, M MLP hidden
// width, V vocabulary.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/kernels/activation.hpp"
#include "core/kernels/attention.hpp"
#include "core/kernels/dropout.hpp"
#include "core/kernels/gemm.hpp"
#include "core/kernels/head_norm.hpp"
#include "core/kernels/norm.hpp"
#include "core/kernels/rope.hpp"
#include "core/parallel.hpp"
#include "model/attention_shape.hpp"
#include "model/buffers.hpp"
#include "model/ngpt.hpp"
#include "model/residual/qkv_hook.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/residual_add.hpp"
#include "model/workspace.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

template <typename T>
void Model<T>::backward(const T* dlogits) {
  const ModelConfig& c = config_;
  Workspace& w = *ws_;
  if (w.batch == 0) throw std::logic_error("backward() called before forward()");
  const int D = c.width;
  const int64_t V = c.vocab;

  const int64_t R = w.R;
  // Logit scale (nGPT): logits = raw ⊙ (s f), s stored (ngpt_scales).
  const T* d_raw = dlogits;
  if (scheme_.logit_scale) {
    const T* s = params_.data() + logit_scale_;
    const T f = T(ngpt_scales(c).s_z.factor);
    T* ds = grads_.data() + logit_scale_;
    for (int64_t n = 0; n < R; ++n) {
      for (int64_t v = 0; v < V; ++v) {
        ds[v] += f * dlogits[n * V + v] * w.logits_raw[n * V + v];
        w.d_logits_raw[n * V + v] = dlogits[n * V + v] * (s[v] * f);
      }
    }
    d_raw = w.d_logits_raw.data();
  }

  // Unembedding: logits_raw (R, V) = h (R, D) U^T (+ the readout bias).
  if (unembed_bias_ >= 0) {
    bias_backward(d_raw, grads_.data() + unembed_bias_, {.rows = R, .in = D, .out = V});
  }
  const T* h_in = w.rows_listed ? w.final_in.data() : w.stream_end;
  const T* h = scheme_.final_norm ? w.final_h.data() : h_in;
  linear_backward(h, params_.data() + unembed_, d_raw, w.d_final.data(), grads_.data() + unembed_,
                  {.rows = R, .in = D, .out = V}, DxInto::assign);
  backward_after_readout();
}

template <typename T>
void Model<T>::backward_after_readout() {
  const ModelConfig& c = config_;
  Workspace& w = *ws_;
  if (w.batch == 0) throw std::logic_error("backward_after_readout() called before forward()");
  const int64_t N = w.batch * w.len;
  const int D = c.width;
  const int64_t R = w.R;
  const T* h_in = w.rows_listed ? w.final_in.data() : w.stream_end;
  const T* d_h = w.d_final.data();
  if (scheme_.final_norm) {
    if (grad_hooks_ != nullptr) {
      offer_norm_grad("ln_final", final_norm_, h_in, w.final_mean.data(), w.final_rstd.data(),
                      w.d_final.data(), R);
    }
    std::fill_n(w.d_final_in.data(), R * D, T(0));
    norm_backward(norm_weights(params_, final_norm_), h_in,
                  {w.final_mean.data(), w.final_rstd.data()}, w.d_final.data(), w.d_final_in.data(),
                  norm_grads(grads_, final_norm_), {R, D});
    d_h = w.d_final_in.data();
  }
  // dL/d(the stream entering the final norm), then back through each sublayer's update, branch
  // and input (residual_stream.hpp).
  ResidualStream<T>& rs = *residual_;
  T* d_end = rs.d_end();
  if (!w.rows_listed) {
    std::copy(d_h, d_h + N * D, d_end);
  } else {
    parallel_zero(d_end, N * D);
    for (int64_t k = 0; k < R; ++k) {
      std::copy(d_h + k * D, d_h + (k + 1) * D, d_end + w.out_rows[k] * D);
    }
  }
  // The stream hooks' gradients: dL/d(stream(i)) is what sublayer i's branch and add leave
  // in g.d_v, except under two streams, whose stream hooks see the stream x (no gradient
  // hooks there).
  const bool stream_grads =
      grad_hooks_ != nullptr && scheme_.residual_mode != ResidualMode::two_stream;
  const int per_layer = c.sublayers_per_layer();
  if (stream_grads) offer_grad(hook_block(num_sublayers() - 1) + "hook_resid_post", d_end, N, {D});
  rs.end_backward();
  for (int i = num_sublayers() - 1; i >= 0; --i) {
    const BranchGradient<T> g = rs.update_backward(i);
    // The stream took the output after dropout, site i + 1 (model.cpp): dz times the mask.
    const T* dz = g.dz;
    if (dropout_key_ && c.dropout > 0) {
      dropout_apply(dz, w.d_dropped.data(), N * D, c.dropout, *dropout_key_, i + 1);
      dz = w.d_dropped.data();
    }
    if (grad_hooks_ != nullptr) {
      offer_grad(hook_block(i) + "hook_" + hook_kind(i) + "_out_normed", dz, N, {D});
    }
    branch_backward(i, w.batch, w.len, g.v, dz, g.d_v);
    if (stream_grads) {
      offer_grad(hook_block(i) + (i % per_layer == 0 ? "hook_resid_pre" : "hook_resid_mid"), g.d_v,
                 N, {D});
      if (i > 0 && i % per_layer == 0)
        offer_grad(hook_block(i - 1) + "hook_resid_post", g.d_v, N, {D});
    }
    rs.input_backward(i);
  }

  // Embedding norm, then scatter into the embedding (and position) rows. Sequential: the
  // same token may repeat, and the order of the sums must not depend on threads.
  const T* de = rs.begin_backward();
  if (dropout_key_ && c.embed_dropout > 0) {  // site 0 (model.cpp)
    dropout_apply(de, w.d_dropped.data(), N * D, c.embed_dropout, *dropout_key_, 0);
    de = w.d_dropped.data();
  }
  if (grad_hooks_ != nullptr) offer_grad("hook_embed", de, N, {D});
  if (scheme_.embed_norm) {
    if (grad_hooks_ != nullptr) {
      offer_norm_grad("ln_embed", embed_norm_, w.embed_raw.data(), w.embed_mean.data(),
                      w.embed_rstd.data(), de, N);
    }
    T* d_raw_e = w.d_u.data();  // the branches' scratch, free now
    parallel_zero(d_raw_e, N * D);
    norm_backward(norm_weights(params_, embed_norm_), w.embed_raw.data(),
                  {w.embed_mean.data(), w.embed_rstd.data()}, de, d_raw_e,
                  norm_grads(grads_, embed_norm_), {N, D});
    de = d_raw_e;
  }
  T* dE = grads_.data() + embed_;
  T* dP = param_ptr(grads_, pos_);
  const T scale = T(c.embed_scale);  // e = scale · Σ E[token] + positions
  for (int64_t n = 0; n < N; ++n) {
    for (int f = 0; f < w.fields; ++f) {
      const int32_t tok = w.tokens[n * w.fields + f];
      if (tok < 0) continue;
      T* row = dE + static_cast<int64_t>(tok) * D;
      for (int d = 0; d < D; ++d) row[d] += scale * de[n * D + d];
    }
    if (dP != nullptr) {
      T* prow = dP + (n % w.len) * D;
      for (int d = 0; d < D; ++d) prow[d] += de[n * D + d];
    }
  }
}

template <typename T>
T* Model<T>::add_backward(int i, const T* x, const T* d_out, T* d_in, bool residual_path) {
  const ModelConfig& c = config_;
  Workspace& w = *ws_;
  auto& sub = w.subs[i];
  const SublayerSlots& slots = scheme_.sublayers[i];
  const SublayerParams& p = sublayers_[i];
  const int64_t N = w.batch * w.len;
  const int D = c.width;
  const T* z = stream_branch(i);

  // out = N_post(r)
  const T* dr = d_out;
  if (slots.norm_post) {
    if (grad_hooks_ != nullptr) {
      offer_norm_grad(hook_block(i) + (p.is_attention ? "ln1_resid" : "ln2_resid"), p.norm_post,
                      sub.r, sub.post_mean, sub.post_rstd, d_out, N);
    }
    parallel_zero(w.d_r.data(), N * D);
    norm_backward(norm_weights(params_, p.norm_post), sub.r, {sub.post_mean, sub.post_rstd}, d_out,
                  w.d_r.data(), norm_grads(grads_, p.norm_post), {N, D});
    dr = w.d_r.data();
  }

  // r = a ⊙ x + b ⊙ z, or nGPT's r = x̂ + |α| f ⊙ (z − x̂), x̂ = N_x(x).
  T* dz = w.d_z.data();
  const Factor<T> fa = factor(slots.residual, params_, p.residual_scale);
  const Factor<T> fb = factor(slots.branch, params_, p.branch_scale);
  const T* alpha = param_ptr(params_, p.alpha);
  if (alpha != nullptr) {
    const T f = T(ngpt_scales(c).alpha.factor);
    const T* xhat = sub.xhat;
    T* dxhat = w.d_xhat.data();
    T* dalpha = grads_.data() + p.alpha;
    for (int64_t n = 0; n < N; ++n) {  // sequential: dalpha sums over rows
      for (int d = 0; d < D; ++d) {
        const int64_t k = n * D + d;
        const T a = std::abs(alpha[d]) * f;
        // d|α|/dα = sign(α), 0 at 0 (as torch.abs).
        const T sign = T(alpha[d] > T(0)) - T(alpha[d] < T(0));
        dalpha[d] += sign * f * dr[k] * (z[k] - xhat[k]);
        dxhat[k] = (T(1) - a) * dr[k];
        dz[k] = a * dr[k];
      }
    }
    parallel_zero(d_in, N * D);
    norm_backward(norm_weights(params_, p.x_norm), x, {sub.x_mean, sub.x_rstd},
                  static_cast<const T*>(dxhat), d_in, norm_grads(grads_, p.x_norm), {N, D});
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
  return dz;
}

template <typename T>
void Model<T>::branch_backward(int i, int64_t batch, int64_t len, const T* v, const T* dz, T* d_v) {
  const ModelConfig& c = config_;
  Workspace& w = *ws_;
  auto& sub = w.subs[i];
  const SublayerSlots& slots = scheme_.sublayers[i];
  const SublayerParams& p = sublayers_[i];
  const int64_t N = batch * len;
  const int D = c.width;
  const int64_t M = c.mlp_hidden();

  // Gradient hook names (hook_sites.cpp): "blocks.l." and the kind, ln1 / ln2 the norms'.
  const std::string block = grad_hooks_ != nullptr ? hook_block(i) : std::string();
  const std::string kind = grad_hooks_ != nullptr ? hook_kind(i) : std::string();
  const char* ln = p.is_attention ? "ln1" : "ln2";

  // z = N_out(y)
  const T* dy = dz;
  if (slots.norm_out) {
    if (grad_hooks_ != nullptr) {
      offer_norm_grad(block + ln + "_post", p.norm_out, sub.y, sub.out_mean, sub.out_rstd, dz, N);
    }
    parallel_zero(w.d_y.data(), N * D);
    norm_backward(norm_weights(params_, p.norm_out), sub.y, {sub.out_mean, sub.out_rstd}, dz,
                  w.d_y.data(), norm_grads(grads_, p.norm_out), {N, D});
    dy = w.d_y.data();
  }
  if (grad_hooks_ != nullptr) offer_grad(block + "hook_" + kind + "_out", dy, N, {D});

  // y = f(u)
  const T* u = slots.norm_in || slots.input_scale != 1.0 ? sub.u : v;
  T* du = w.d_u.data();
  if (p.is_attention) {
    linear_backward(sub.attn_o, params_.data() + p.w_out, dy, w.d_attn_o.data(),
                    grads_.data() + p.w_out, {.rows = N, .in = D, .out = D}, DxInto::assign);
    if (grad_hooks_ != nullptr) offer_attention_grads(i, sub.qkv, sub.probs, w.d_attn_o.data());
    const AttentionShape shape = attention_shape(c, batch, len);
    AttentionDropout drop;
    const AttentionDropout* dropout = attention_dropout(i, drop) ? &drop : nullptr;
    if (c.pos == PosEncoding::relative) {
      relative_attention_backward(p, sub, batch, len, dropout);
    } else {
      attention_backward<T>(shape, sub.qkv, sub.probs, w.d_attn_o.data(), w.d_qkv.data(), nullptr,
                            nullptr, dropout);
    }
    if (grad_hooks_ != nullptr) offer_qkv_grads(i, w.d_qkv.data());
    train_qkv_hook_->backward(i, w.d_qkv.data(), N);
    if (scheme_.sphere_qk) {  // nGPT: q, k = s_qk f ⊙ q/|q| after RoPE
      sphere_qk_backward(sub.qkv_raw, params_.data() + p.s_qk, T(ngpt_scales(c).s_qk.factor),
                         sub.head_rstd, w.d_qkv.data(), grads_.data() + p.s_qk, N, D, c.heads);
    }
    if (c.pos == PosEncoding::rope) {
      rope_apply(w.d_qkv.data(), {batch, len, D, c.heads}, w.rope, Rotation::inverse);
    }
    if (scheme_.head_norms.any()) {
      head_norms_backward(p, sub.qkv_raw, sub.q_normed, sub.head_mean, sub.head_rstd,
                          w.d_qkv.data(), N);
    }
    linear_backward(u, params_.data() + p.w_in, w.d_qkv.data(), du, grads_.data() + p.w_in,
                    {.rows = N, .in = D, .out = 3 * D}, DxInto::assign);
  } else {
    if (p.b_out >= 0) bias_backward(dy, grads_.data() + p.b_out, {.rows = N, .in = M, .out = D});
    linear_backward(sub.hidden, params_.data() + p.w_out, dy, w.d_hidden.data(),
                    grads_.data() + p.w_out, {.rows = N, .in = M, .out = D}, DxInto::assign);
    if (grad_hooks_ != nullptr) offer_grad(block + "mlp.hook_post", w.d_hidden.data(), N, {M});
    activation_backward(c.activation, sub.hidden_pre, w.d_hidden.data(), w.d_hidden_pre.data(),
                        N * M);
    if (grad_hooks_ != nullptr) offer_grad(block + "mlp.hook_pre", w.d_hidden_pre.data(), N, {M});
    if (scheme_.mlp_scale) {  // nGPT: the pre-activation = raw ⊙ (s_uv f)
      column_scale_backward(sub.hidden_raw, params_.data() + p.s_uv, T(ngpt_scales(c).s_uv.factor),
                            w.d_hidden_pre.data(), grads_.data() + p.s_uv, N, M);
    }
    if (p.b_in >= 0) {
      bias_backward(static_cast<const T*>(w.d_hidden_pre.data()), grads_.data() + p.b_in,
                    {.rows = N, .in = D, .out = M});
    }
    linear_backward(u, params_.data() + p.w_in, w.d_hidden_pre.data(), du, grads_.data() + p.w_in,
                    {.rows = N, .in = D, .out = M}, DxInto::assign);
  }

  // u = s · N_in(v); the gradient adds into d_v.
  if (grad_hooks_ != nullptr) offer_grad(block + kind + ".hook_in", du, N, {D});
  if (slots.input_scale != 1.0) scale_rows(du, T(slots.input_scale), du, N * D);
  if (slots.norm_in) {
    if (grad_hooks_ != nullptr) {
      offer_norm_grad(block + ln, p.norm_in, v, sub.in_mean, sub.in_rstd, du, N);
    }
    norm_backward(norm_weights(params_, p.norm_in), v, {sub.in_mean, sub.in_rstd}, du, d_v,
                  norm_grads(grads_, p.norm_in), {N, D});
  } else {
    for_row_shards(N, [&](int64_t, int64_t n0, int64_t n1) {
      for (int64_t k = n0 * D; k < n1 * D; ++k) d_v[k] += du[k];
    });
  }
}

// The head norms' backward, part by part (head_norm.hpp).
// The kernel writes u's, v's and the keys' gradients per sequence (core/kernels/relative.hpp);
// their sums over the sequences are added to the gradients, and W_R's is
//   dW_R += dr^T p   (r = p W_R^T, dr (2T − 1, D) the keys' gradient, p the sinusoid).
template <typename T>
void Model<T>::relative_attention_backward(const SublayerParams& p, const SublayerBuffers<T>& sub,
                                           int64_t batch, int64_t len,
                                           const AttentionDropout* dropout) {
  Workspace& w = *ws_;
  const int64_t D = config_.width, K = relative_rows(len);
  const RelativeLogits<T> rel{params_.data() + p.rel_u, params_.data() + p.rel_v, sub.rel_keys};
  const RelativeGrads<T> d_rel{w.d_rel_u.data(), w.d_rel_v.data(), w.d_rel_keys.data()};
  attention_backward(attention_shape(config_, batch, len), sub.qkv, sub.probs, w.d_attn_o.data(),
                     w.d_qkv.data(), &rel, &d_rel, dropout);
  T* du = grads_.data() + p.rel_u;
  T* dv = grads_.data() + p.rel_v;
  T* dr = w.d_rel_keys_sum.data();
  std::fill(dr, dr + K * D, T(0));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t d = 0; d < D; ++d) {
      du[d] += w.d_rel_u[b * D + d];
      dv[d] += w.d_rel_v[b * D + d];
    }
    for (int64_t k = 0; k < K * D; ++k) dr[k] += w.d_rel_keys[b * K * D + k];
  }
  linear_backward(sub.rel_table, params_.data() + p.rel_w, static_cast<const T*>(dr),
                  static_cast<T*>(nullptr), grads_.data() + p.rel_w,
                  {.rows = K, .in = D, .out = D});
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

// This file's members for both scalar types (the class itself is instantiated in model.cpp).
template void Model<float>::backward_after_readout();
template void Model<double>::backward_after_readout();
template void Model<float>::backward(const float*);
template void Model<double>::backward(const double*);
template float* Model<float>::add_backward(int, const float*, const float*, float*, bool);
template double* Model<double>::add_backward(int, const double*, const double*, double*, bool);
template void Model<float>::branch_backward(int, int64_t, int64_t, const float*, const float*,
                                            float*);
template void Model<double>::branch_backward(int, int64_t, int64_t, const double*, const double*,
                                             double*);
template void Model<float>::relative_attention_backward(const SublayerParams&,
                                                        const SublayerBuffers<float>&, int64_t,
                                                        int64_t, const AttentionDropout*);
template void Model<double>::relative_attention_backward(const SublayerParams&,
                                                         const SublayerBuffers<double>&, int64_t,
                                                         int64_t, const AttentionDropout*);
template void Model<float>::head_norms_backward(const SublayerParams&, const float*, const float*,
                                                const float*, const float*, float*, int64_t);
template void Model<double>::head_norms_backward(const SublayerParams&, const double*,
                                                 const double*, const double*, const double*,
                                                 double*, int64_t);

}  // namespace normlab
