// The model's workspaces: the training pass's activations, kept for backward, and the
// inference pass's buffers (Model::forward, Model::forward_rows). Private to src/model/.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kernels/attnres.hpp"
#include "core/kernels/rope.hpp"
#include "normlab/model.hpp"

namespace normlab {

// Activations of the last forward pass, sized once per (B, T) and reused (docs/design.md principle
// 5).
template <typename T>
struct Model<T>::Workspace {
  int64_t batch = 0, len = 0;
  int fields = 1;
  std::vector<int32_t> tokens;            // (N, F)
  std::vector<T> embed_raw;               // (N, D) embeddings before the embedding norm
  std::vector<T> embed_mean, embed_rstd;  // (N)
  std::vector<T> sinusoid;                // (T, D) sinusoidal positions
  RopeTable<T> rope;                      // (T, dh) RoPE factors
  std::vector<std::vector<T>> stream;     // S + 1 buffers (N, D): input of each sublayer

  struct Sub {
    const T* input = nullptr;                // (N, D) what f read: the residual stream's input(i)
    std::vector<T> u, in_mean, in_rstd;      // (N, D) normed input, (N) stats
    std::vector<T> qkv;                      // (N, 3D) attention, after RoPE
    std::vector<T> qkv_raw;                  // (N, 3D) before the head norms (when any)
    std::vector<T> head_mean, head_rstd;     // (3, N·H) their statistics
    std::vector<T> q_normed;                 // (N, D) q̂ before s_h (l2 QK-norm)
    std::vector<T> probs;                    // (B, H, T, Tp), Tp = T rounded up to 16
    std::vector<T> attn_o;                   // (N, D) heads concatenated
    std::vector<T> hidden_pre, hidden;       // (N, M) MLP before/after activation
    std::vector<T> hidden_raw;               // (N, M) nGPT: the MLP's pre-activation before s_uv
    std::vector<T> y;                        // (N, D) f(u)
    std::vector<T> z, out_mean, out_rstd;    // (N, D) N_out(y)
    std::vector<T> r, post_mean, post_rstd;  // (N, D) residual sum before N_post
    std::vector<T> xhat, x_mean, x_rstd;     // (N, D) nGPT: N_x(x) of the interpolation, (N)
  };
  std::vector<Sub> subs;
  const T* stream_end = nullptr;  // (N, D) the stream entering the final norm (the residual
                                  // stream's end)
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
  std::vector<T> res_q;                     // (S + 1, D) q_l = w_l ⊙ g_l of every mixing point
  std::vector<std::vector<T>> mix_logits;   // S + 1 × (K_l, N) logits of point l, by source
  std::vector<const T*> logit_q;            // the q of the points that mix one source
  std::vector<T*> logit_out;                // and where its logits go in their mix_logits
  std::vector<std::vector<T>> d_block;      // res_blocks × (N, D) dL/d(block's current record)
  std::vector<const T*> mix_src, mix_rstd;  // K_l pointers for one mixing point
  std::vector<T*> mix_dsrc;
  std::vector<ResMixPoint<T>> chunk_points;  // the points of one chunk, for res_mix_backward
  std::vector<std::vector<T>> d_chunk;  // min(chunk, S + 1) × (N, D): dx of a chunk's points
  std::vector<const T*> chunk_dx;       // the dx of each point of the current chunk

  // Two streams (residual/two_streams.cpp): y entering each sublayer, and per sublayer (the last: the
  // merge, whose v is the output h) the norms of the streams; empty where the rule has none.
  struct TwoStream {
    std::vector<T> xhat, x_mean, x_rstd;  // (N, D) N_x(x), (N)
    std::vector<T> yhat, y_mean, y_rstd;  // (N, D) N_y(y), (N)
    std::vector<T> v;                     // (N, D) x̂ + N_y(y); the merge: h
  };
  std::vector<std::vector<T>> y_stream;    // S + 1 buffers (N, D)
  std::vector<TwoStream> two;              // S + 1
  std::vector<T> d_y_stream, d_v, d_xhat;  // (N, D) dL/dy (running), dL/dv, dL/dx̂

  // Hyper-connections (hyper_conn.hpp): the n streams H entering each sublayer (the last: after
  // the last sublayer), and per sublayer its weights and what their backward needs.
  struct Hyper {
    std::vector<T> hbar, mean, rstd;  // HC: (N, n, D) N(H), (N·n)
    std::vector<T> act, mix;          // (N, n(n+2)) pre-activations' parts, A_m | A_r | B
    std::vector<T> rms;               // mHC: (N)
  };
  std::vector<std::vector<T>> hyper_H;  // S + 1 buffers (N, n, D)
  std::vector<Hyper> hyper;             // S
  std::vector<T> d_H_a, d_H_b, d_hbar;  // (N, n, D)
  std::vector<T> d_mix;                 // (N, n(n+2))
  std::vector<T> hyper_dz;              // (N, D) dL/dz of the sublayer

  // Backward scratch.
  std::vector<T> d_stream_a, d_stream_b, d_r, d_z, d_y, d_u, d_attn_o;  // (N, D)
  std::vector<T> d_qkv;                                                 // (N, 3D)
  std::vector<T> d_hidden, d_hidden_pre;                                // (N, M)
  std::vector<T> d_logits_raw;                                          // (R, V)
  std::vector<T> d_final, d_final_in;                                   // (R, D)
};

// Buffers of forward_rows, sized for the largest N seen; h, h_next, x_rows and the modes' own
// fields are sized and written by the inference stream (src/model/residual/).
template <typename T>
struct Model<T>::EvalWorkspace {
  std::vector<T> sinusoid;              // (T, D)
  RopeTable<T> rope;                    // (T, dh) RoPE factors
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
  // Two streams: y_stream (N, D), R rows after the last attention, like h; the norms of the streams
  // (their statistics go to mean, rstd) and the branch input; the merged output.
  std::vector<T> y_stream, xhat, yhat, v, merged;  // (N, D)
  // Hyper-connections: the streams H and H' (N, n, D), R rows after the last attention; the
  // weights of one sublayer and what they were computed from.
  std::vector<T> hyper_H, hyper_H_next, hbar;  // (N, n, D)
  std::vector<T> hyper_mean, hyper_rstd;       // (N·n)
  std::vector<T> hyper_act, hyper_mix;         // (N, n(n+2))
  std::vector<T> hyper_rms;                    // (N)
};

}  // namespace normlab
