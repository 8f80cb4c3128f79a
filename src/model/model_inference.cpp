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
#include "normlab/model.hpp"

namespace normlab {

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
  if (!eval_) {
    eval_ = std::make_unique<EvalWorkspace>();
    inference_ = make_inference_stream(*this);
  }
  EvalWorkspace& w = *eval_;
  InferenceStream<T>& stream = *inference_;
  const int D = c.width;
  const int64_t V = c.vocab;
  // Buffers grow to the rows actually used: after the last attention only R rows remain.
  grow(w.u, N * D);
  grow(w.mean, N);
  grow(w.rstd, N);
  grow(w.qkv, N * 3 * D);
  const bool head_norms = scheme_.head_norms.any() || scheme_.sphere_qk;
  if (head_norms) {
    grow(w.qkv_raw, N * 3 * D);
    grow(w.head_mean, 3 * N * c.heads);
    grow(w.head_rstd, 3 * N * c.heads);
  }
  if (scheme_.embed_norm) grow(w.embed_raw, N * D);
  grow(w.logits, R * V);
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
  if (c.pos == PosEncoding::rope) prepare_rope_table(w.rope, len, c.width / c.heads, c.rope_base);
  stream.prepare(N, R);

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

  int last_attention = 0;
  for (int i = 0; i < num_sublayers(); ++i) {
    if (sublayers_[i].is_attention) last_attention = i;
  }
  int64_t cur = N;  // rows in the stream: N, then R after the last attention
  for (int i = 0; i < num_sublayers(); ++i) {
    const SublayerParams& p = sublayers_[i];
    const bool last = p.is_attention && i == last_attention;
    const int64_t out_rows = last ? R : cur;  // attention before the last one: cur = N
    const T* v = stream.input(i, cur);
    size_eval_branch(i, cur, out_rows);
    // Attention streams over keys for every row, and for the listed rows only in the last
    // attention sublayer; from there on the stream has R rows.
    const T* z = branch_forward(
        i, batch, len, v, cur, eval_buffers(),
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
      t.qkv = p.is_attention ? w.qkv.data() : nullptr;
      t.heads = p.is_attention ? w.gathered.data() : nullptr;
      t.branch = w.y.data();
      t.branch_normed = z;
      t.output = out;
      observer(t);
    }
    cur = out_rows;
  }

  const T* h = stream.end(cur);
  if (scheme_.final_norm) {
    norm(final_norm_, h, w.u.data(), cur);
    h = w.u.data();
  }
  linear_forward(h, params_.data() + unembed_, w.logits.data(), {.rows = R, .in = D, .out = V});
  if (scheme_.logit_scale) {
    const T* s = params_.data() + logit_scale_;
    const T f = T(ngpt_scales(c).s_z.factor);
    for (int64_t k = 0; k < R; ++k) {
      for (int64_t v = 0; v < V; ++v) w.logits[k * V + v] *= s[v] * f;
    }
  }
  return w.logits.data();
}

// Sublayer i's branch buffers for `rows` input rows and `out_rows` output rows.
template <typename T>
void Model<T>::size_eval_branch(int i, int64_t rows, int64_t out_rows) {
  EvalWorkspace& w = *eval_;
  const SublayerSlots& slots = scheme_.sublayers[i];
  const int64_t D = config_.width, M = config_.mlp_hidden();
  grow(w.y, out_rows * D);
  if (sublayers_[i].is_attention) {
    grow(w.gathered, out_rows * D);
  } else {
    grow(w.hidden_pre, rows * M);
    grow(w.hidden, rows * M);
  }
  if (slots.norm_out) grow(w.z, out_rows * D);
  if (slots.norm_post) grow(w.r, out_rows * D);
}

// One set of buffers for every sublayer; the norms share one set of statistics.
template <typename T>
SublayerBuffers<T> Model<T>::eval_buffers() {
  EvalWorkspace& w = *eval_;
  return {.u = w.u.data(),
          .in_mean = w.mean.data(),
          .in_rstd = w.rstd.data(),
          .qkv_raw = data_or_null(w.qkv_raw),
          .qkv = w.qkv.data(),
          .q_normed = nullptr,
          .head_mean = data_or_null(w.head_mean),
          .head_rstd = data_or_null(w.head_rstd),
          .attn_o = data_or_null(w.gathered),
          .hidden_pre = data_or_null(w.hidden_pre),
          .hidden = data_or_null(w.hidden),
          .y = w.y.data(),
          .z = data_or_null(w.z),
          .out_mean = w.mean.data(),
          .out_rstd = w.rstd.data(),
          .r = data_or_null(w.r),
          .post_mean = w.mean.data(),
          .post_rstd = w.rstd.data(),
          .xhat = data_or_null(w.xhat),
          .x_mean = w.mean.data(),
          .x_rstd = w.rstd.data(),
          .rope = &w.rope,
          .qkv_hook = eval_qkv_hook_.get()};
}

template const float* Model<float>::forward_rows(const int32_t*, int64_t, int64_t, int,
                                                 const std::vector<int64_t>&,
                                                 const SublayerObserver<float>&);
template const double* Model<double>::forward_rows(const int32_t*, int64_t, int64_t, int,
                                                   const std::vector<int64_t>&,
                                                   const SublayerObserver<double>&);
template void Model<float>::size_eval_branch(int, int64_t, int64_t);
template void Model<double>::size_eval_branch(int, int64_t, int64_t);
template SublayerBuffers<float> Model<float>::eval_buffers();
template SublayerBuffers<double> Model<double>::eval_buffers();

}  // namespace normlab
