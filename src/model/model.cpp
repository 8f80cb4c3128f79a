// The training forward pass: tokens to logits over the workspace, every activation kept for
// backward (model_backward.cpp); the workspace's sizing and the read-only views of it that
// probes and tests use. The parameters are laid out in model_layout.cpp, each sublayer runs
// sublayer_forward.cpp, the residual modes are residual/, and inference at any length is
// model_inference.cpp.
//
// Letters: B batch, T length, N = B·T rows, R listed rows, D width, H heads, M MLP hidden
// width, V vocabulary, F token fields, S sublayers.
#include "normlab/model/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/kernels/attention.hpp"
#include "core/kernels/attnres.hpp"
#include "core/kernels/dropout.hpp"
#include "core/kernels/gemm.hpp"
#include "core/kernels/norm.hpp"
#include "core/kernels/rope.hpp"
#include "core/parallel.hpp"
#include "core/scratch.hpp"
#include "model/buffers.hpp"
#include "model/residual/inference_stream.hpp"
#include "model/residual/qkv_hook.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/sinusoid.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/base/batch.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/core/memory_budget.hpp"

namespace normlab {

template <typename T>
Model<T>::~Model() = default;

template <typename T>
int64_t Model<T>::declare_training_buffers(int64_t batch, int64_t len, const OutputRows& out) {
  Workspace& w = *ws_;
  Arena<T>& a = w.arena;
  const ModelConfig& c = config_;
  const int64_t N = batch * len, R = out.listed ? out.count : N;
  const int64_t D = c.width, M = c.mlp_hidden(), V = c.vocab;
  const int S = num_sublayers();
  a.clear();
  a.declare(w.embed_raw, scheme_.embed_norm ? N * D : 0);
  a.declare(w.embed_mean, scheme_.embed_norm ? N : 0);
  a.declare(w.embed_rstd, scheme_.embed_norm ? N : 0);
  a.declare(w.sinusoid, c.pos == PosEncoding::sinusoidal ? len * D : 0);
  const bool relative = c.pos == PosEncoding::relative;
  const int64_t rel_rows = relative ? relative_rows(len) : 0;
  a.declare(w.rel_table, rel_rows * D);
  w.stream.resize(S + 1);
  for (auto& s : w.stream) a.declare(s, N * D);
  w.subs.resize(S);
  w.inputs.assign(S, nullptr);
  hooked_inputs_.assign(S, {});
  for (int i = 0; i < S; ++i) {
    const SublayerShape shape{.i = i,
                              .attention = sublayers_[i].is_attention,
                              .training = true,
                              .batch = batch,
                              .len = len,
                              .rows = N,
                              .out_rows = N};
    declare_sublayer_buffers(w.subs[i], c, scheme_, shape,
                             [&](T*& slot, int64_t count) { a.declare(slot, count); });
    w.subs[i].rope = &w.rope;
    w.subs[i].qkv_hook = train_qkv_hook_.get();
  }
  residual_->declare_buffers(a, N);
  train_qkv_hook_->declare_buffers(a, N);
  a.declare(w.final_in, out.listed ? R * D : 0);
  a.declare(w.final_h, scheme_.final_norm ? R * D : 0);
  a.declare(w.final_mean, scheme_.final_norm ? R : 0);
  a.declare(w.final_rstd, scheme_.final_norm ? R : 0);
  a.declare(w.logits_raw, out.logits ? R * V : 0);
  a.declare(w.logits, out.logits && scheme_.logit_scale ? R * V : 0);
  // Backward.
  for (auto* d : {&w.d_stream_a, &w.d_stream_b, &w.d_r, &w.d_z, &w.d_y, &w.d_u, &w.d_attn_o}) {
    a.declare(*d, N * D);
  }
  if (scheme_.sublayers.front().interpolate) a.declare(w.d_xhat, N * D);  // nGPT's dL/dN_x(x)
  a.declare(w.d_qkv, N * 3 * D);
  a.declare(w.d_dropped, c.dropout > 0 || c.embed_dropout > 0 ? N * D : 0);
  a.declare(w.d_rel_u, relative ? batch * D : 0);
  a.declare(w.d_rel_v, relative ? batch * D : 0);
  a.declare(w.d_rel_keys, batch * rel_rows * D);
  a.declare(w.d_rel_keys_sum, rel_rows * D);
  a.declare(w.d_hidden, c.mlp ? N * M : 0);
  a.declare(w.d_hidden_pre, c.mlp ? N * M : 0);
  a.declare(w.d_logits_raw, scheme_.logit_scale ? R * V : 0);
  a.declare(w.d_final, R * D);
  a.declare(w.d_final_in, scheme_.final_norm ? R * D : 0);
  return a.elements();
}

template <typename T>
int64_t Model<T>::training_workspace_values() const {
  return ws_->arena.elements();
}

template <typename T>
void Model<T>::ensure_workspace(int64_t batch, int64_t len, const OutputRows& out) {
  Workspace& w = *ws_;
  if (w.batch == batch && w.len == len && w.carved_for == out) return;
  const ModelConfig& c = config_;
  const int64_t elements = declare_training_buffers(batch, len, out);
  check_fits_in_memory(
      static_cast<double>(elements) * sizeof(T),
      fmt::format("activations for a batch of {} sequences of {} tokens", batch, len));
  w.arena.carve();
  w.batch = batch;
  w.len = len;
  w.carved_for = out;
  if (c.pos == PosEncoding::sinusoidal) {
    fill_sinusoid(len, c.width, w.sinusoid.data(), c.sinusoid_from_end);
  }
  if (c.pos == PosEncoding::rope) prepare_rope_table(w.rope, len, c.width / c.heads, c.rope_base);
  if (c.pos == PosEncoding::relative) {
    fill_relative_sinusoid(len, c.width, w.rel_table.data());
    for (SublayerBuffers<T>& sub : w.subs) sub.rel_table = w.rel_table.data();
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
  // Field 0 holds each position's token; the fields after it may be empty (kNoToken).
  for (int64_t k = 0; k < batch * len * fields; ++k) {
    const bool may_be_empty = k % fields != 0;
    if (may_be_empty && tokens[k] == kNoToken) continue;
    if (tokens[k] < 0 || tokens[k] >= c.vocab) {
      throw UsageError(fmt::format(
          "token {} at position {} field {} is outside the vocabulary [0, {}){}", tokens[k],
          k / fields, k % fields, c.vocab,
          tokens[k] == kNoToken ? " (-1, an empty field, is allowed in fields 1 and above)" : ""));
    }
  }
}

template <typename T>
void Model<T>::embed(const int32_t* tokens, int64_t batch, int64_t len, int fields,
                     const T* sinusoid, T* e) const {
  const int D = config_.width;
  const T* E = params_.data() + embed_;
  const T* P = param_ptr(params_, pos_);
  const T scale = T(config_.embed_scale);  // e = scale · Σ E[token] + positions
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
      if (scale != T(1)) {
        for (int d = 0; d < D; ++d) out[d] *= scale;
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
const T* Model<T>::forward_to_readout(const int32_t* tokens, int64_t batch, int64_t len, int fields,
                                      const std::vector<int64_t>* rows, bool keep_logits) {
  const ModelConfig& c = config_;
  const int64_t N = batch * len;
  check_tokens(tokens, batch, len, fields);
  const OutputRows out{.listed = rows != nullptr,
                       .count = rows != nullptr ? static_cast<int64_t>(rows->size()) : N,
                       .logits = keep_logits};
  ensure_workspace(batch, len, out);
  Workspace& w = *ws_;
  const int D = c.width;
  w.fields = fields;
  w.tokens.assign(tokens, tokens + N * fields);

  // Embedding (+ positions) (N, D), then the optional embedding norm, into the residual
  // stream's entry; then each sublayer's input, branch and update (residual_stream.hpp).
  ResidualStream<T>& rs = *residual_;
  T* embedded = rs.embedding();
  T* e = scheme_.embed_norm ? w.embed_raw.data() : embedded;
  embed(tokens, batch, len, fields, w.sinusoid.empty() ? nullptr : w.sinusoid.data(), e);
  if (scheme_.embed_norm) {
    norm_forward(norm_weights(params_, embed_norm_), e, embedded,
                 {w.embed_mean.data(), w.embed_rstd.data()}, {N, D}, c.norm_eps);
    if (hooks_ != nullptr) {
      offer_norm("ln_embed", embed_norm_, e, embedded, w.embed_mean.data(), w.embed_rstd.data(), N);
    }
  }
  if (hooks_ != nullptr) offer("hook_embed", embedded, N, {D});
  // Dropout sites (core/kernels/dropout.hpp): 0 the embedding stream, i + 1 sublayer i's output,
  // S + 1 + i its attention probabilities (attention_dropout); the hooks see what enters them.
  if (dropout_key_ && c.embed_dropout > 0) {
    dropout_apply(static_cast<const T*>(embedded), embedded, N * D, c.embed_dropout, *dropout_key_,
                  0);
  }
  rs.begin(N);
  // The stream hooks see stream(i): under two streams the stream x, which input(i) reads;
  // under the other modes what input(i) writes.
  const bool x_stream = scheme_.residual_mode == ResidualMode::two_stream;
  for (int i = 0; i < num_sublayers(); ++i) {
    if (hooks_ != nullptr && x_stream) offer_stream(i, w.stream[i].data());
    w.inputs[i] = rs.input(i, N);
    if (hooks_ != nullptr && !x_stream) offer_stream(i, w.stream[i].data());
    const T* z = branch_forward(i, batch, len, w.inputs[i], N, w.subs[i],
                                AttentionStrategy<T>::full(w.subs[i].probs));
    if (dropout_key_ && c.dropout > 0) {
      dropout_apply(z, w.subs[i].dropped, N * D, c.dropout, *dropout_key_, i + 1);
      z = w.subs[i].dropped;
    }
    rs.update(i, z, N);
  }

  // Only the listed rows continue to the final norm and the unembedding.
  const std::string last_post = hooks_ != nullptr ? hook_block(num_sublayers() - 1) : "";
  if (hooks_ != nullptr && x_stream)
    offer(last_post + "hook_resid_post", w.stream.back().data(), N, {D});
  const T* h = rs.end(N);
  if (hooks_ != nullptr && !x_stream)
    offer(last_post + "hook_resid_post", w.stream.back().data(), N, {D});
  w.stream_end = h;
  w.rows_listed = rows != nullptr;
  w.R = rows != nullptr ? static_cast<int64_t>(rows->size()) : N;
  const int64_t R = w.R;
  if (rows != nullptr) {
    w.out_rows = *rows;
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
    norm_forward(norm_weights(params_, final_norm_), h, w.final_h.data(),
                 {w.final_mean.data(), w.final_rstd.data()}, {R, D}, c.norm_eps);
    if (hooks_ != nullptr) {
      offer_norm("ln_final", final_norm_, h, w.final_h.data(), w.final_mean.data(),
                 w.final_rstd.data(), R);
    }
    h = w.final_h.data();
  }
  return h;
}

template <typename T>
const T* Model<T>::forward(const int32_t* tokens, int64_t batch, int64_t len, int fields,
                           const std::vector<int64_t>* rows) {
  const ModelConfig& c = config_;
  const T* h = forward_to_readout(tokens, batch, len, fields, rows, true);
  Workspace& w = *ws_;
  const int64_t R = w.R, D = c.width, V = c.vocab;
  linear_forward(h, params_.data() + unembed_, w.logits_raw.data(), {.rows = R, .in = D, .out = V});
  if (unembed_bias_ >= 0) {
    bias_forward(w.logits_raw.data(), params_.data() + unembed_bias_,
                 {.rows = R, .in = D, .out = V});
  }
  if (!scheme_.logit_scale) return w.logits_raw.data();
  // nGPT's s_z, stored (ngpt_scales).
  const T* s = params_.data() + logit_scale_;
  const T f = T(ngpt_scales(c).s_z.factor);
  for (int64_t n = 0; n < R; ++n) {
    for (int64_t v = 0; v < V; ++v) w.logits[n * V + v] = w.logits_raw[n * V + v] * (s[v] * f);
  }
  return w.logits.data();
}

template <typename T>
bool Model<T>::readout_loss_fuses() const {
  return !scheme_.logit_scale && hooks_ == nullptr && grad_hooks_ == nullptr;
}

template <typename T>
double Model<T>::forward_with_readout_loss(const int32_t* tokens, int64_t batch, int64_t len,
                                           int fields, const std::vector<int64_t>& rows,
                                           const ShardLoss& shard_loss) {
  if (!readout_loss_fuses()) {
    throw std::logic_error("forward_with_readout_loss: not with nGPT's logit scale or hooks set");
  }
  const ModelConfig& c = config_;
  const T* h = forward_to_readout(tokens, batch, len, fields, &rows, false);
  Workspace& w = *ws_;
  const int64_t R = w.R, D = c.width, V = c.vocab;
  zero_grads();
  double* parts = zeroed_scratch<double>(ScratchUse::readout_loss_partial, shard_count(R));
  const bool bias = unembed_bias_ >= 0;
  linear_by_shards<T>(h, params_.data() + unembed_, bias ? params_.data() + unembed_bias_ : nullptr,
                      w.d_final.data(), grads_.data() + unembed_,
                      bias ? grads_.data() + unembed_bias_ : nullptr,
                      {.rows = R, .in = D, .out = V}, DxInto::assign,
                      [&](int64_t s, int64_t n0, int64_t n1, T* logits) {
                        parts[s] = shard_loss(n0, n1, logits, parts[s]);
                      });
  double sum = 0;
  for (int64_t s = 0; s < shard_count(R); ++s) sum += parts[s];
  return sum;
}

template <typename T>
const T* Model<T>::stream(int i) const {
  return ws_->stream.at(i).data();
}

template <typename T>
const T* Model<T>::branch_output(int i) const {
  return ws_->subs.at(i).y;
}

template <typename T>
const T* Model<T>::branch_input(int i) const {
  const SublayerSlots& slots = scheme_.sublayers.at(i);
  return slots.norm_in || slots.input_scale != 1.0 ? ws_->subs.at(i).u : ws_->inputs.at(i);
}

template <typename T>
const T* Model<T>::final_normed() const {
  return scheme_.final_norm && !ws_->rows_listed ? ws_->final_h.data() : nullptr;
}

template <typename T>
bool Model<T>::attention_dropout(int i, AttentionDropout& out) const {
  if (!dropout_key_ || config_.attn_dropout <= 0) return false;
  out = {.p = config_.attn_dropout,
         .key = *dropout_key_,
         .site = static_cast<uint64_t>(num_sublayers() + 1 + i)};
  return true;
}

template <typename T>
const T* Model<T>::stream_branch(int i) const {
  if (dropout_key_ && config_.dropout > 0) return ws_->subs.at(i).dropped;
  return branch_output_normed(i);
}

template <typename T>
const T* Model<T>::branch_output_normed(int i) const {
  const auto& sub = ws_->subs.at(i);
  return scheme_.sublayers.at(i).norm_out ? sub.z : sub.y;
}

template <typename T>
const T* Model<T>::attention_probs(int i) const {
  return ws_->subs.at(i).probs;
}

template <typename T>
const T* Model<T>::attention_heads(int i) const {
  return ws_->subs.at(i).attn_o;
}

template <typename T>
const T* Model<T>::res_weights(int l) const {
  return residual_->res_weights(l);
}

template <typename T>
const T* Model<T>::res_source(int j) const {
  return residual_->res_source(j);
}

template <typename T>
const T* Model<T>::res_source_rstd(int j) const {
  return residual_->res_source_rstd(j);
}

template <typename T>
int64_t Model<T>::res_query_offset(int l) const {
  return residual_->res_query_offset(l);
}

template <typename T>
int64_t Model<T>::res_gain_offset(int l) const {
  return residual_->res_gain_offset(l);
}

template <typename T>
const T* Model<T>::hyper_mix(int i) const {
  return residual_->hyper_mix(i);
}

template class Model<float>;
template class Model<double>;

}  // namespace normlab
