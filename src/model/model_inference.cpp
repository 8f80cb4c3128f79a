// Inference at any length (Model::forward_rows): the sublayers' one forward
// (sublayer_forward.cpp) over the scheme's inference stream (residual/inference_stream.hpp),
// with attention streaming over keys, O(N·D) memory, nothing kept for a backward, and only the
// listed rows computed from the last attention sublayer on.
//
// Letters: B batch, T length, N = B·T rows, R listed rows, D width, M MLP hidden width,
// V vocabulary, S sublayers.
#include <algorithm>
#include <stdexcept>

#include "core/kernels/gemm.hpp"
#include "core/kernels/norm.hpp"
#include "model/buffers.hpp"
#include "model/residual/inference_stream.hpp"
#include "model/sinusoid.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

template <typename T>
const T* Model<T>::forward_rows(const int32_t* tokens, int64_t batch, int64_t len, int fields,
                                const std::vector<int64_t>& rows,
                                const SublayerObserver<T>& observer) {
  const ModelConfig& c = config_;
  if (hooks_ != nullptr) throw std::logic_error("forward_rows: forward hooks are set");
  check_tokens(tokens, batch, len, fields);
  const int64_t N = batch * len;
  const int64_t R = static_cast<int64_t>(rows.size());
  for (int64_t k = 0; k < R; ++k) {
    if (rows[k] < 0 || rows[k] >= N || (k > 0 && rows[k] <= rows[k - 1])) {
      throw std::logic_error("forward_rows: rows must be ascending indices in [0, B*T)");
    }
  }
  if (!eval_) {
    eval_ = std::make_unique<EvalWorkspace>();
    inference_ = make_inference_stream(*this);
  }
  EvalWorkspace& w = *eval_;
  InferenceStream<T>& stream = *inference_;
  const int D = c.width;
  const int64_t V = c.vocab;
  declare_inference_buffers(batch, len, R);
  w.arena.carve();
  if (static_cast<int64_t>(w.all_rows.size()) < N) {
    const int64_t old = static_cast<int64_t>(w.all_rows.size());
    w.all_rows.resize(N);
    for (int64_t n = old; n < N; ++n) w.all_rows[n] = n;
  }
  const T* sinusoid = nullptr;
  if (c.pos == PosEncoding::sinusoidal) {
    fill_sinusoid(len, D, w.sinusoid.data(), c.sinusoid_from_end);
    sinusoid = w.sinusoid.data();
  }
  if (c.pos == PosEncoding::rope) prepare_rope_table(w.rope, len, c.width / c.heads, c.rope_base);
  if (c.pos == PosEncoding::relative) {
    fill_relative_sinusoid(len, D, w.rel_table.data());
    w.sub.rel_table = w.rel_table.data();
  }

  auto norm = [&](const NormParams& np, const T* x, T* y, int64_t rows_n) {
    norm_forward(norm_weights(params_, np), x, y, {w.mean.data(), w.rstd.data()}, {rows_n, D},
                 c.norm_eps);
  };

  T* embedded = stream.embedding();
  if (scheme_.embed_norm) {
    embed(tokens, batch, len, fields, sinusoid, w.embed_raw.data());
    norm(embed_norm_, w.embed_raw.data(), embedded, N);
  } else {
    embed(tokens, batch, len, fields, sinusoid, embedded);
  }
  stream.begin(N);

  const int last_attention = last_attention_sublayer();
  int64_t cur = N;  // rows in the stream: N, then R after the last attention
  for (int i = 0; i < num_sublayers(); ++i) {
    const SublayerParams& p = sublayers_[i];
    const bool last = p.is_attention && i == last_attention;
    const int64_t out_rows = last ? R : cur;  // attention before the last one: cur = N
    const T* v = stream.input(i, cur);
    // Attention streams over keys for every row, and for the listed rows only in the last
    // attention sublayer; from there on the stream has R rows.
    const T* z = branch_forward(
        i, batch, len, v, cur, w.sub,
        AttentionStrategy<T>::streaming(last ? rows.data() : w.all_rows.data(), out_rows));
    if (last) stream.keep_rows(i, rows);
    const T* out = stream.update(i, z, out_rows);
    if (observer) {
      SublayerTrace<T> t;
      t.index = i;
      t.is_attention = p.is_attention;
      t.batch = batch;
      t.len = len;
      t.rows = out_rows;
      t.row_ids = out_rows == N ? w.all_rows.data() : rows.data();
      t.input = stream.residual_input();
      t.qkv = p.is_attention ? w.sub.qkv : nullptr;
      if (p.is_attention && c.pos == PosEncoding::relative) {  // the keys branch_forward wrote
        t.rel_u = params_.data() + p.rel_u;
        t.rel_v = params_.data() + p.rel_v;
        t.rel_keys = w.sub.rel_keys;
      }
      t.heads = p.is_attention ? w.sub.attn_o : nullptr;
      t.branch = w.sub.y;
      t.branch_normed = z;
      t.output = out;
      observer(t);
    }
    cur = out_rows;
  }

  const T* h = stream.end(cur);
  if (scheme_.final_norm) {
    norm(final_norm_, h, w.final_h.data(), cur);
    h = w.final_h.data();
  }
  linear_forward(h, params_.data() + unembed_, w.logits.data(), {.rows = R, .in = D, .out = V});
  if (unembed_bias_ >= 0) {
    bias_forward(w.logits.data(), params_.data() + unembed_bias_, {.rows = R, .in = D, .out = V});
  }
  if (scheme_.logit_scale) {
    const T* s = params_.data() + logit_scale_;
    const T f = T(ngpt_scales(c).s_z.factor);
    for (int64_t k = 0; k < R; ++k) {
      for (int64_t v = 0; v < V; ++v) w.logits[k * V + v] *= s[v] * f;
    }
  }
  return w.logits.data();
}

template <typename T>
int64_t Model<T>::declare_inference_buffers(int64_t batch, int64_t len, int64_t out_rows) {
  EvalWorkspace& w = *eval_;
  Arena<T>& a = w.arena;
  const ModelConfig& c = config_;
  const int64_t N = batch * len, R = out_rows, D = c.width, V = c.vocab;
  a.clear();
  a.declare(w.sinusoid, c.pos == PosEncoding::sinusoidal ? len * D : 0);
  a.declare(w.rel_table, c.pos == PosEncoding::relative ? relative_rows(len) * D : 0);
  a.declare(w.embed_raw, scheme_.embed_norm ? N * D : 0);
  a.declare(w.mean, N);
  a.declare(w.rstd, N);
  // One set of sublayer buffers, as large as the largest sublayer's: every row up to the last
  // attention, which computes the listed rows only.
  const int last_attention = last_attention_sublayer();
  int64_t rows = N;
  for (int i = 0; i < num_sublayers(); ++i) {
    const bool attention = sublayers_[i].is_attention;
    const int64_t out = attention && i == last_attention ? R : rows;
    const SublayerShape shape{.i = i,
                              .attention = attention,
                              .training = false,
                              .batch = batch,
                              .len = len,
                              .rows = rows,
                              .out_rows = out};
    declare_sublayer_buffers(w.sub, c, scheme_, shape,
                             [&](T*& slot, int64_t count) { a.declare_at_least(slot, count); });
    rows = out;
  }
  w.sub.rope = &w.rope;
  w.sub.qkv_hook = eval_qkv_hook_.get();
  inference_->declare_buffers(a, N, R);
  eval_qkv_hook_->declare_buffers(a, N);
  a.declare(w.final_h, scheme_.final_norm ? R * D : 0);
  a.declare(w.logits, R * V);
  return a.elements();
}

template <typename T>
const SublayerBuffers<T>& Model<T>::eval_buffers() const {
  return eval_->sub;
}

template <typename T>
int Model<T>::last_attention_sublayer() const {
  int last = 0;
  for (int i = 0; i < num_sublayers(); ++i) {
    if (sublayers_[i].is_attention) last = i;
  }
  return last;
}

template const float* Model<float>::forward_rows(const int32_t*, int64_t, int64_t, int,
                                                 const std::vector<int64_t>&,
                                                 const SublayerObserver<float>&);
template const double* Model<double>::forward_rows(const int32_t*, int64_t, int64_t, int,
                                                   const std::vector<int64_t>&,
                                                   const SublayerObserver<double>&);
template int64_t Model<float>::declare_inference_buffers(int64_t, int64_t, int64_t);
template int64_t Model<double>::declare_inference_buffers(int64_t, int64_t, int64_t);
template int Model<float>::last_attention_sublayer() const;
template int Model<double>::last_attention_sublayer() const;
template const SublayerBuffers<float>& Model<float>::eval_buffers() const;
template const SublayerBuffers<double>& Model<double>::eval_buffers() const;

}  // namespace normlab
