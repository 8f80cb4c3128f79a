// Inference at any length (Model::forward_rows): the sublayers' one forward
// (sublayer_forward.cpp) with attention streaming over keys, O(N·D) memory, nothing kept for
// a backward, and only the listed rows computed from the last attention sublayer on.
//
// Letters: B batch, T length, N = B·T rows, R listed rows, D width, M MLP hidden width,
// V vocabulary, S sublayers.
#include <algorithm>
#include <stdexcept>

#include "core/kernels/attnres.hpp"
#include "core/kernels/gemm.hpp"
#include "core/kernels/norm.hpp"
#include "model/buffers.hpp"
#include "model/hyper_conn.hpp"
#include "model/residual_add.hpp"
#include "model/sinusoid.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/two_stream.hpp"
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
  if (!eval_) eval_ = std::make_unique<EvalWorkspace>();
  EvalWorkspace& w = *eval_;
  const int D = c.width;
  const int64_t M = c.mlp_hidden(), V = c.vocab;
  // Buffers grow to the rows actually used: after the last attention only R rows remain.
  grow(w.h, N * D);
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
  if (scheme_.sublayers.front().interpolate) grow(w.xhat, N * D);  // nGPT's N_x(x)
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
  if (c.pos == PosEncoding::rope) prepare_rope_table(w.rope, len, c.width / c.heads, c.rope_base);

  auto norm = [&](const NormParams& np, const T* x, T* y, int64_t rows_n) {
    norm_forward(norm_weights(params_, np), x, y, {w.mean.data(), w.rstd.data()}, {rows_n, D},
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

  // Two streams (two_stream.cpp): y beside the stream h, and the norms of the streams, whose
  // statistics share mean and rstd (nothing is kept).
  const bool two = two_streams();
  const TwoStreamRule& rule = scheme_.two_stream;
  TwoStreamBuffers<T> two_buffers;
  if (two) {
    for (auto* v : {&w.y_stream, &w.xhat, &w.yhat, &w.v, &w.merged}) grow(*v, N * D);
    two_buffers = {.xhat = w.xhat.data(),
                   .x_mean = w.mean.data(),
                   .x_rstd = w.rstd.data(),
                   .yhat = w.yhat.data(),
                   .y_mean = w.mean.data(),
                   .y_rstd = w.rstd.data(),
                   .v = w.v.data()};
  }

  // Hyper-connections (hyper_conn.cpp): the n streams H beside w.h, which holds each
  // sublayer's input h and, after it, the sum of the streams.
  const bool hy = hyper();
  const int n_streams = hy ? hyper_streams() : 0;
  HyperBuffers<T> hyper_b;
  if (hy) {
    const int64_t W = int64_t{n_streams} * (n_streams + 2);
    for (auto* v : {&w.hyper_H, &w.hyper_H_next}) grow(*v, N * n_streams * D);
    grow(w.hyper_act, N * W);
    grow(w.hyper_mix, N * W);
    if (c.sinkhorn) {
      grow(w.hyper_rms, N);
    } else {
      grow(w.hbar, N * n_streams * D);
      grow(w.hyper_mean, N * n_streams);
      grow(w.hyper_rstd, N * n_streams);
    }
    hyper_b = {.hbar = data_or_null(w.hbar),
               .mean = data_or_null(w.hyper_mean),
               .rstd = data_or_null(w.hyper_rstd),
               .act = w.hyper_act.data(),
               .rms = data_or_null(w.hyper_rms),
               .mix = w.hyper_mix.data()};
  }

  T* embedded = res ? w.block[0].data() : w.h.data();
  if (scheme_.embed_norm) {
    embed(tokens, batch, len, fields, sinusoid, w.embed_raw.data());
    norm(embed_norm_, w.embed_raw.data(), embedded, N);
  } else {
    embed(tokens, batch, len, fields, sinusoid, embedded);
  }
  if (res) res_rstd(embedded, w.block_rstd[0].data(), N, D, c.norm_eps);
  if (two) std::copy(embedded, embedded + N * D, w.y_stream.data());  // y_0 = x_0
  if (hy) {  // every stream starts as the embedding stream
    for (int64_t r = 0; r < N; ++r) {
      for (int s = 0; s < n_streams; ++s) {
        std::copy(embedded + r * D, embedded + (r + 1) * D,
                  w.hyper_H.data() + (r * n_streams + s) * D);
      }
    }
  }

  int last_attention = 0;
  for (int i = 0; i < num_sublayers(); ++i) {
    if (sublayers_[i].is_attention) last_attention = i;
  }
  int64_t cur = N;  // rows in the stream: N, then R after the last attention
  for (int i = 0; i < num_sublayers(); ++i) {
    const SublayerSlots& slots = scheme_.sublayers[i];
    const SublayerParams& p = sublayers_[i];
    if (res) mix(i, cur);
    const bool last = p.is_attention && i == last_attention;
    const int64_t out_rows = last ? R : cur;  // attention before the last one: cur = N
    grow(w.y, out_rows * D);
    if (p.is_attention) {
      grow(w.gathered, out_rows * D);
    } else {
      grow(w.hidden_pre, cur * M);
      grow(w.hidden, cur * M);
    }
    if (slots.norm_out) grow(w.z, out_rows * D);
    if (slots.norm_post) grow(w.r, out_rows * D);
    if (!res) grow(w.h_next, out_rows * D);
    // One set of buffers for every sublayer; the norms share one set of statistics.
    const SublayerBuffers<T> buffers{.u = w.u.data(),
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
                                     .rope = &w.rope};
    if (hy) {  // w.h = h = Σ_s A_m[s] H_s, the branch's input
      hyper_weights(i, w.hyper_H.data(), hyper_b, cur);
      hyper_input(w.hyper_H.data(), hyper_b.mix, w.h.data(), cur);
    }
    const T* x = w.h.data();
    TwoStreamInput<T> in{x, x};  // the add's residual input and f's input
    if (two) in = two_stream_input(i, x, w.y_stream.data(), two_buffers, cur);
    // Attention streams over keys for every row, and for the listed rows only in the last
    // attention sublayer; from there on the stream has R rows.
    const T* z = branch_forward(
        i, batch, len, in.v, cur, buffers,
        AttentionStrategy<T>::streaming(last ? rows.data() : w.all_rows.data(), out_rows));
    if (last) {
      // The residual input of the kept rows only.
      for (int64_t k = 0; k < R; ++k) {
        std::copy(x + rows[k] * D, x + (rows[k] + 1) * D, w.x_rows.data() + k * D);
      }
      x = w.x_rows.data();
      in.xhat = x;
      if (two) {
        // y and x̂ keep the kept rows, in place (rows ascend: row rows[k] ≥ k is read before
        // it could be overwritten).
        for (T* buffer : {w.y_stream.data(), rule.renorm_x ? w.xhat.data() : nullptr}) {
          if (buffer == nullptr) continue;
          for (int64_t k = 0; k < R; ++k) {
            std::copy(buffer + rows[k] * D, buffer + (rows[k] + 1) * D, buffer + k * D);
          }
        }
        if (rule.renorm_x) in.xhat = w.xhat.data();
      }
      if (hy) {
        // The streams and the weights keep the kept rows, in place, as y above.
        const int64_t HD = int64_t{n_streams} * D, W = int64_t{n_streams} * (n_streams + 2);
        for (const auto& [buffer, width] :
             {std::pair{w.hyper_H.data(), HD}, std::pair{w.hyper_mix.data(), W}}) {
          for (int64_t k = 0; k < R; ++k) {
            std::copy(buffer + rows[k] * width, buffer + (rows[k] + 1) * width, buffer + k * width);
          }
        }
      }
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
    const T* out = nullptr;  // what the sublayer leaves: the stream, or under AttnRes its record
    if (res) {
      // Record i + 1 = z, or the block's partial sum + z, in its block's buffer.
      const int b = scheme_.res_source_block[i + 1];
      T* record = w.block[b].data();
      if (scheme_.res_continues[i]) {
        residual_add(static_cast<const T*>(record), z, record, out_rows, D);
      } else {
        std::copy(z, z + out_rows * D, record);
      }
      res_rstd(static_cast<const T*>(record), w.block_rstd[b].data(), out_rows, D, c.norm_eps);
      out = record;
    } else if (hy) {
      // H' = B z + A_rᵀ H; the stream the observer sees (and w.h after the swap) is Σ_j H'_j.
      hyper_update(w.hyper_H.data(), hyper_b.mix, z, w.hyper_H_next.data(), out_rows);
      std::swap(w.hyper_H, w.hyper_H_next);
      hyper_merge(w.hyper_H.data(), w.h_next.data(), out_rows);
      out = w.h_next.data();
    } else {
      add_forward(i, in.xhat, z, buffers, w.h_next.data(), out_rows);
      out = w.h_next.data();
    }
    if (two) {  // y ← y + z, in place
      residual_add(static_cast<const T*>(w.y_stream.data()), z, w.y_stream.data(), out_rows, D);
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
  if (two) {
    two_stream_merge(h, w.y_stream.data(), two_buffers, w.merged.data(), cur);
    h = w.merged.data();
  }
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

template const float* Model<float>::forward_rows(const int32_t*, int64_t, int64_t, int,
                                                 const std::vector<int64_t>&,
                                                 const SublayerObserver<float>&);
template const double* Model<double>::forward_rows(const int32_t*, int64_t, int64_t, int,
                                                   const std::vector<int64_t>&,
                                                   const SublayerObserver<double>&);

}  // namespace normlab
