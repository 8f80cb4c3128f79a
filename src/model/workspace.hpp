// The model's workspaces: the training pass's activations, kept for backward, and the
// inference pass's buffers (Model::forward, Model::forward_rows). Private to src/model/.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/kernels/attnres.hpp"
#include "core/kernels/rope.hpp"
#include "model/arena.hpp"
#include "model/sublayer_buffers.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

// Activations of the last forward pass, declared by Model::declare_training_buffers and the
// residual stream, carved from one arena per (B, T, R) and reused (docs/design.md principle 5).
template <typename T>
struct Model<T>::Workspace {
  int64_t batch = 0, len = 0;
  OutputRows carved_for;  // the output rows the arena was carved for
  Arena<T> arena;
  int fields = 1;
  std::vector<int32_t> tokens;           // (N, F)
  std::span<T> embed_raw;                // (N, D) embeddings before the embedding norm
  std::span<T> embed_mean, embed_rstd;   // (N)
  std::span<T> sinusoid;                 // (T, D) sinusoidal positions
  RopeTable<T> rope;                     // (T, dh) RoPE factors
  std::span<T> rel_table;                // (2T − 1, D) pos relative: p_δ (relative.hpp)
  std::vector<std::span<T>> stream;      // S + 1 buffers (N, D): input of each sublayer
  std::vector<SublayerBuffers<T>> subs;  // S (sublayer_buffers.hpp)
  // S × (N, D): what sublayer i's f read, the residual stream's input(i).
  std::vector<const T*> inputs;
  // (N, D) the stream entering the final norm (the residual stream's end).
  const T* stream_end = nullptr;
  // Logits are computed for R rows: all N, or the rows a caller listed (the scored ones).
  bool rows_listed = false;
  std::vector<int64_t> out_rows;  // (R) when rows were listed
  int64_t R = 0;
  std::span<T> final_in;                         // (R, D) the listed rows of the stream
  std::span<T> final_h, final_mean, final_rstd;  // (R, D), (R)
  std::span<T> logits_raw;                       // (R, V) before the nGPT logit scale
  std::span<T> logits;                           // (R, V)

  // AttnRes (docs/attnres.md). Sources are the embedding stream and the sublayer records;
  // a record aliases its sublayer's z, or its r (the block's partial sum) when it continues.
  std::span<T> source0;                     // (N, D) the embedding stream, source 0
  std::vector<const T*> sources;            // S + 1 pointers to (N, D)
  std::vector<std::span<T>> source_rstd;    // S + 1 × (N) 1/rms of each source
  std::vector<std::span<T>> mix_alpha;      // S + 1 × (N, K_l) weights of mixing point l
  std::span<T> res_q;                       // (S + 1, D) q_l = w_l ⊙ g_l of every mixing point
  std::vector<std::span<T>> mix_logits;     // S + 1 × (K_l, N) logits of point l, by source
  std::vector<const T*> logit_q;            // the q of the points that mix one source
  std::vector<T*> logit_out;                // and where its logits go in their mix_logits
  std::vector<std::span<T>> d_block;        // res_blocks × (N, D) dL/d(block's current record)
  std::vector<const T*> mix_src, mix_rstd;  // K_l pointers for one mixing point
  std::vector<T*> mix_dsrc;
  std::vector<ResMixPoint<T>> chunk_points;  // the points of one chunk, for res_mix_backward
  std::vector<std::span<T>> d_chunk;         // min(chunk, S + 1) × (N, D): dx of a chunk's points
  std::vector<const T*> chunk_dx;            // the dx of each point of the current chunk

  // Two streams (residual/two_streams.cpp): y entering each sublayer, and per sublayer (the last:
  // the merge, whose v is the output h) the norms of the streams; empty where the rule has none.
  struct TwoStream {
    std::span<T> xhat, x_mean, x_rstd;  // (N, D) N_x(x), (N)
    std::span<T> yhat, y_mean, y_rstd;  // (N, D) N_y(y), (N)
    std::span<T> v;                     // (N, D) x̂ + N_y(y); the merge: h
  };
  std::vector<std::span<T>> y_stream;  // S + 1 buffers (N, D)
  std::vector<TwoStream> two;          // S + 1
  std::span<T> d_y_stream, d_v;        // (N, D) dL/dy (running), dL/dv
  std::span<T> d_xhat;                 // (N, D) dL/dx̂ of the two streams' N_x(x), or of nGPT's

  // Hyper-connections (hyper_conn.hpp): the n streams H entering each sublayer (the last: after
  // the last sublayer), and per sublayer its weights and what their backward needs.
  struct Hyper {
    std::span<T> hbar, mean, rstd;  // HC: (N, n, D) N(H), (N·n)
    std::span<T> act, mix;          // (N, n(n+2)) pre-activations' parts, A_m | A_r | B
    std::span<T> rms;               // mHC: (N)
  };
  std::vector<std::span<T>> hyper_H;  // S + 1 buffers (N, n, D)
  std::vector<Hyper> hyper;           // S
  std::span<T> d_H_a, d_H_b, d_hbar;  // (N, n, D)
  std::span<T> d_mix;                 // (N, n(n+2))
  std::span<T> hyper_dz;              // (N, D) dL/dz of the sublayer

  // Backward scratch.
  std::span<T> d_stream_a, d_stream_b, d_r, d_z, d_y, d_u, d_attn_o;  // (N, D)
  std::span<T> d_qkv;                                                 // (N, 3D)
  std::span<T> d_dropped;  // (N, D) with dropout: a gradient times the mask (dropout.hpp)
  // pos relative: the relative terms' gradients per sequence, and the keys' summed over them.
  std::span<T> d_rel_u, d_rel_v;        // (B, D)
  std::span<T> d_rel_keys;              // (B, 2T − 1, D)
  std::span<T> d_rel_keys_sum;          // (2T − 1, D)
  std::span<T> d_hidden, d_hidden_pre;  // (N, M)
  std::span<T> d_logits_raw;            // (R, V)
  std::span<T> d_final, d_final_in;     // (R, D)
};

// Buffers of forward_rows, declared by Model::declare_inference_buffers and the inference
// stream (src/model/residual/), carved from one arena on every call.
template <typename T>
struct Model<T>::EvalWorkspace {
  Arena<T> arena;
  std::span<T> sinusoid;          // (T, D)
  RopeTable<T> rope;              // (T, dh) RoPE factors
  std::span<T> rel_table;         // (2T − 1, D) pos relative: p_δ (relative.hpp)
  std::span<T> embed_raw;         // (N, D)
  std::span<T> mean, rstd;        // (N) the embedding and final norms' statistics
  SublayerBuffers<T> sub;         // the one set every sublayer reuses (sublayer_buffers.hpp)
  std::span<T> final_h;           // (R, D) the final norm's output
  std::span<T> logits;            // (R, V)
  std::vector<int64_t> all_rows;  // 0 .. N−1
  std::span<T> h, h_next;         // (N, D) the stream; R rows after the last attention
  std::span<T> x_rows;            // (R, D) the residual input of the kept rows
  // AttnRes: one buffer per block holding its latest record (partial sums are added in place,
  // which inference may do since nothing is kept for a backward), and the records' 1/rms.
  std::vector<std::span<T>> block, block_rstd;  // res_blocks × (N, D), (N)
  std::span<T> alpha;                           // (N, S + 1) mixture weights, scratch
  std::vector<const T*> mix_src, mix_rstd;      // K_l pointers
  // Two streams: y_stream (N, D), R rows after the last attention, like h; the norms of the
  // streams (their statistics go to mean, rstd) and the branch input; the merged output.
  std::span<T> y_stream, xhat, yhat, v, merged;  // (N, D)
  // Hyper-connections: the streams H and H' (N, n, D), R rows after the last attention; the
  // weights of one sublayer and what they were computed from.
  std::span<T> hyper_H, hyper_H_next, hbar;  // (N, n, D)
  std::span<T> hyper_mean, hyper_rstd;       // (N·n)
  std::span<T> hyper_act, hyper_mix;         // (N, n(n+2))
  std::span<T> hyper_rms;                    // (N)
};

}  // namespace normlab
