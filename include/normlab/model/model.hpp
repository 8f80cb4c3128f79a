// The transformer: embedding, L blocks of (attention [, MLP]) sublayers under a resolved
// normalization scheme, optional final norm, unembedding.
//
// Letters: B batch, T length, N = B·T rows, D width, H heads, V vocab, M = mlp_mult·D.
// T is the scalar type: float for training, double for finite-difference checks.
//
// Usage:
//   Model<float> model(config);       // parameters laid out (ParamLayout), zero
//   model.init(seed);                 // random init as the config and scheme say
//   const float* logits = model.forward(tokens, B, T);   // (B, T, V)
//   model.zero_grads(); model.backward(dlogits);         // grads() has dL/dparams
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "normlab/model/activation_hooks.hpp"
#include "normlab/model/model_config.hpp"
#include "normlab/model/param_layout.hpp"
#include "normlab/model/scheme.hpp"

namespace normlab {

// Offsets of one norm's parameters in the flat buffer; -1 when absent.
struct NormParams {
  bool active = false;                // the norm is applied here
  NormKind kind = NormKind::rmsnorm;  // which norm (slots may differ from the model's norm)
  int64_t gain = -1;
  int64_t bias = -1;
  // The kind's scalar parameters (norm_scalar_count of them, one tensor of shape (1) each,
  // consecutive in the buffer): dyt alpha; derf alpha, shift; scalenorm scale.
  int64_t scalars = -1;
};

// Offsets of one sublayer's hyper-connection parameters (docs/schemes.md, "Hyper-connections");
// -1 when absent. n streams, D width.
struct HyperParams {
  // Hyper-connections (dynamic): N over each stream, static and dynamic weights, scales.
  NormParams norm;             // N of H̄ = N(H), one norm shared by the n streams (D)
  int64_t static_alpha = -1;   // (n, n + 1): column 0 A_m, columns 1.. A_r
  int64_t static_beta = -1;    // (n) B
  int64_t dynamic_alpha = -1;  // (D, n + 1): W_m | W_r
  int64_t dynamic_beta = -1;   // (D) W_β
  int64_t alpha_scale = -1;    // (1) s_α
  int64_t beta_scale = -1;     // (1) s_β
  // mHC: projections of the RMS-normed flattened streams (nD), gates and biases.
  int64_t phi_pre = -1, phi_post = -1, phi_res = -1;     // (nD, n), (nD, n), (nD, n²)
  int64_t gate_pre = -1, gate_post = -1, gate_res = -1;  // (1) each: α_pre, α_post, α_res
  int64_t b_pre = -1, b_post = -1, b_res = -1;           // (n), (n), (n, n)
};

// Offsets of one sublayer's parameters; -1 when absent.
struct SublayerParams {
  bool is_attention = true;
  NormParams norm_in, norm_out, norm_post;
  int64_t w_in = -1;            // attention: q|k|v (3D, D); MLP: up (M, D)
  int64_t w_out = -1;           // attention: o (D, D);      MLP: down (D, M)
  int64_t b_in = -1;            // MLP with mlp_bias: up's bias (M)
  int64_t b_out = -1;           // MLP with mlp_bias: down's bias (D)
  int64_t rel_u = -1;           // pos relative: content bias u (D) (core/kernels/relative.hpp)
  int64_t rel_v = -1;           // pos relative: position bias v (D)
  int64_t rel_w = -1;           // pos relative: W_R (D, D), relative keys r_δ = W_R p_δ
  int64_t alpha = -1;           // nGPT interpolation step (D), stored (ngpt_scales)
  int64_t s_qk = -1;            // nGPT: attention's q/k scale (D), stored (ngpt_scales)
  int64_t s_uv = -1;            // nGPT: MLP's pre-activation scale (M), stored (ngpt_scales)
  int64_t residual_scale = -1;  // learnable factor on x in the add (D, or 1); -1: constant
  int64_t branch_scale = -1;    // learnable factor on z in the add (D, or 1); -1: constant
  int64_t res_query = -1;       // AttnRes pseudo-query w of this sublayer's input mixture (D)
  NormParams res_key_norm;      // AttnRes RMSNorm on the sources (gain, D)
  // Attention's per-head norms (scheme().head_norms): gains, biases (dh) and scalars shared
  // by the heads; qk_scale (H) the learnable s_h of the l2 QK-norm.
  NormParams q_norm, k_norm, v_norm;
  int64_t qk_scale = -1;
  // Two streams (docs/schemes.md, "Two streams"): N_x, applied to x before the sublayer, and
  // N_y, on y where f reads it (SiameseNorm).
  // nGPT's interpolation reads N_x(x) as well (an l2 norm has no parameters).
  NormParams x_norm, y_norm;
  HyperParams hc;  // hyper-connections: the weights that mix the streams around this sublayer
};

// What Model::forward_rows computed in one sublayer, handed to an observer (the probes).
// Pointers are valid during the call only. The sublayer computed `rows` rows: every row
// n = b·T + t before the last attention sublayer, only the requested rows from it on.
template <typename T>
struct SublayerTrace {
  int index = 0;                     // sublayer i
  bool is_attention = false;         // attention (else MLP)
  int64_t batch = 0, len = 0;        // B, T of the call
  int64_t rows = 0;                  // R_i rows below
  const int64_t* row_ids = nullptr;  // (R_i) ascending row indices n = b·T + t
  const T* input = nullptr;          // (R_i, D) x, the stream entering the sublayer
  const T* qkv = nullptr;            // attention: (B·T, 3D) q|k|v of every row, after the
                                     // head norms and RoPE (logits: attention_scale · q·k)
  // pos relative: the terms the logits add (core/kernels/relative.hpp), else null: u, v (D)
  // and the relative keys (2T − 1, D).
  const T *rel_u = nullptr, *rel_v = nullptr, *rel_keys = nullptr;
  const T* heads = nullptr;          // attention: (R_i, D) heads concatenated, before w_out
  const T* branch = nullptr;         // (R_i, D) y = f(u)
  const T* branch_normed = nullptr;  // (R_i, D) N_out(y); the same as branch without one
  const T* output = nullptr;         // (R_i, D) the stream leaving the sublayer; AttnRes: the
                                     // sublayer's record (z, or its block's partial sum)
};

template <typename T>
using SublayerObserver = std::function<void(const SublayerTrace<T>&)>;

template <typename T>
struct SublayerBuffers;  // src/model/sublayer_buffers.hpp
template <typename T>
struct RelativeLogits;    // src/core/kernels/relative.hpp
struct AttentionDropout;  // src/core/kernels/attention.hpp
template <typename T>
struct AttentionStrategy;
template <typename T>
struct BranchGradient;  // src/model/residual/residual_stream.hpp
template <typename T>
class ResidualStream;
template <typename T>
class AdditiveStream;  // src/model/residual/, one per residual mode
template <typename T>
class AttnResStream;
template <typename T>
class TwoStreams;
template <typename T>
class HyperStreams;
template <typename T>
class QkvHook;  // src/model/residual/qkv_hook.hpp
template <typename T>
class InferenceStream;  // src/model/residual/inference_stream.hpp
template <typename T>
class AdditiveInference;  // src/model/residual/, one per residual mode
template <typename T>
class AttnResInference;
template <typename T>
class TwoStreamsInference;
template <typename T>
class HyperInference;

template <typename T>
class Model {
 public:
  // Validates the config, lays out the parameters and allocates them and their gradients.
  // Throws UsageError, before allocating, when those two buffers would not fit in the memory
  // this machine has available (the message gives the estimate).
  explicit Model(const ModelConfig& config);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return config_; }
  const ResolvedScheme& scheme() const { return scheme_; }
  const ParamLayout& layout() const { return layout_; }

  std::vector<T>& params() { return params_; }
  const std::vector<T>& params() const { return params_; }
  std::vector<T>& grads() { return grads_; }
  const std::vector<T>& grads() const { return grads_; }
  // Values the training workspace's buffers take for the last training forward: activations,
  // logits and backward scratch (docs/design.md principle 5).
  int64_t training_workspace_values() const;

  // Draws every parameter from the seed (RNG order = layout order), then applies the
  // scheme's side effects (nGPT unit norms).
  void init(uint64_t seed);

  // nGPT: renormalize embeddings and weight rows/columns to unit norm (no-op otherwise).
  void apply_weight_constraints();

  // Training forward over tokens (B, T, F), each in [0, V); fields 1.. may be kNoToken (-1)
  // for an empty field; a position's embedding is the sum of its fields' rows. Keeps every
  // activation needed by backward(). Returns logits (B, T, V), valid until the next forward; with
  // `rows` (ascending row indices n = b·T + t), only those rows reach the final norm and
  // the unembedding, and the logits are (R, V) in the order of `rows` (a task that scores
  // one position per sequence then pays for B rows of logits, not B·T).
  const T* forward(const int32_t* tokens, int64_t batch, int64_t len, int fields = 1,
                   const std::vector<int64_t>* rows = nullptr);

  // Inference forward at any length with O(N·D) memory: attention streams over keys
  // (core/kernels/attention_stream.hpp), nothing is kept for backward, and the last layer
  // computes only the listed rows. rows: R ascending row indices n = b·T + t.
  // Returns logits (R, V) in the order of `rows`, valid until the next call.
  // `observer`, if set, sees every sublayer's activations as they are computed (probes).
  const T* forward_rows(const int32_t* tokens, int64_t batch, int64_t len, int fields,
                        const std::vector<int64_t>& rows, const SublayerObserver<T>& observer = {});

  // The hooks the training forward offers its named activations to, and those backward offers
  // their gradients to (activation_hooks.hpp); null (the default): none. forward_rows refuses
  // to run while forward hooks are set.
  void set_forward_hooks(ActivationHooks<T>* hooks) { hooks_ = hooks; }
  void set_gradient_hooks(ActivationHooks<T>* hooks) { grad_hooks_ = hooks; }

  // Accumulates dL/dparams into grads() given dL/dlogits of the last forward: (B, T, V), or
  // (R, V) when it listed rows.
  void backward(const T* dlogits);

  void zero_grads();

  // The loss of logits rows [n0, n1), each row's alone (the cross-entropy): returns sum plus
  // those rows' terms, added in row order, and turns the rows (n1 − n0, V) into its gradient
  // on them, in place. A row shard's rows come in ranges in row order, its sum carried on.
  using ShardLoss = std::function<double(int64_t n0, int64_t n1, T* logits, double sum)>;
  // Whether forward_with_readout_loss can run: not with nGPT's logit scale, nor while hooks
  // are set (they are offered the logits' path as backward() walks it).
  bool readout_loss_fuses() const;
  // The training pass with a loss of each row alone fused into the readout: forward() over
  // `rows`, zero_grads(), then the logits, their loss and its gradient through the
  // unembedding row shard by row shard (core/kernels/gemm.hpp linear_by_shards), the (R, V)
  // logits never stored. Returns the sum of the shards' parts in shard order; then
  // backward_after_readout() goes on through the rest of the model. grads() get the bits of
  // forward(), the loss over all the logits, zero_grads() and backward().
  double forward_with_readout_loss(const int32_t* tokens, int64_t batch, int64_t len, int fields,
                                   const std::vector<int64_t>& rows, const ShardLoss& shard_loss);
  void backward_after_readout();

  // Dropout (config().dropout, embed_dropout; core/kernels/dropout.hpp) applies to the
  // training forward and backward while a key is set, its masks a function of the key alone:
  // training sets one per step (dropout_step_key), everything else (evaluation, the CLI's
  // forward) runs without one.
  void set_dropout_key(std::optional<uint64_t> key) { dropout_key_ = key; }
  std::optional<uint64_t> dropout_key() const { return dropout_key_; }

  // Read-only views of the last forward's activations, for probes and tests.
  // Residual stream entering sublayer i (i = number of sublayers: the stream after the last);
  // under two streams the stream x.
  const T* stream(int i) const;
  // Input of sublayer i's function f: the stream after the input norm N_in (B, T, D); the
  // stream itself when the slot has no input norm (two streams: x̂ or x̂ + N_y(y)).
  const T* branch_input(int i) const;
  // The stream after the final norm (B, T, D) when the scheme has one and the last forward
  // listed no rows; nullptr otherwise.
  const T* final_normed() const;
  // Output of sublayer i's function f before its output norm (B, T, D).
  const T* branch_output(int i) const;
  // Output of sublayer i after its output norm (same as branch_output without one).
  const T* branch_output_normed(int i) const;
  // Attention probabilities of attention sublayer i (B, H, T, Tp): row stride
  // Tp = attention_probs_stride(T) = T rounded up to a multiple of 16; entries beyond the
  // keys a query sees are 0.
  const T* attention_probs(int i) const;
  // Output of attention sublayer i before its output projection (B, T, D), heads
  // concatenated: head h is columns [h·D/H, (h+1)·D/H).
  const T* attention_heads(int i) const;
  // AttnRes (docs/attnres.md; throws std::logic_error under an additive scheme). Mixing point l
  // is the input of sublayer l (l < S) or the final stream (l = S), S = num_sublayers().
  // Mixture weights of point l: (N, K_l) row-major, K_l = scheme().res_sources[l].size(),
  // column k the weight of source scheme().res_sources[l][k]; each row sums to 1.
  const T* res_weights(int l) const;
  // Source j (N, D): 0 the embedding stream, j ≥ 1 the record of sublayer j − 1 (its branch
  // output z, or under block_attnres its block's partial sum up to and including it).
  const T* res_source(int j) const;
  // 1 / sqrt(mean(source j²) + eps) per row (N); a row's RMS is sqrt(1 / rstd² − eps).
  const T* res_source_rstd(int j) const;
  // Hyper-connections (docs/schemes.md; throws std::logic_error under another scheme): the
  // weights of sublayer i in the last forward, (N, n(n+2)) row-major, per row A_m (n), A_r
  // (n, n; [s][j] the weight of stream s in new stream j) and B (n). stream(i) is then the
  // branch input h = Σ_s A_m[s] H_s, and stream(S) the sum of the streams.
  const T* hyper_mix(int i) const;
  // Offsets of mixing point l's query and key-norm gain (D each).
  int64_t res_query_offset(int l) const;
  int64_t res_gain_offset(int l) const;

  const std::vector<SublayerParams>& sublayer_params() const { return sublayers_; }
  int num_sublayers() const { return static_cast<int>(sublayers_.size()); }

 private:
  struct Workspace;
  struct EvalWorkspace;
  struct LayoutOnly {};
  // Validates and lays out the parameters without allocating them (param_layout_of).
  Model(const ModelConfig& config, LayoutOnly);
  friend ParamLayout param_layout_of(const ModelConfig& config);
  friend double activation_bytes_estimate(const ModelConfig& config, int64_t batch, int64_t len,
                                          size_t value_bytes);
  void build_layout();
  // The rows a training pass computes logits for: all N, or `count` listed ones; `logits`:
  // the (R, V) logits are kept (not by forward_with_readout_loss, which computes them a block
  // of rows at a time).
  struct OutputRows {
    bool listed = false;
    int64_t count = 0;
    bool logits = true;
    bool operator==(const OutputRows&) const = default;
  };
  // Declares every activation of a training pass over `batch` sequences of `len` tokens into
  // the workspace's arena (model.cpp), or of an inference pass with `out_rows` listed rows into
  // the inference arena (model_inference.cpp); returns the values they take.
  int64_t declare_training_buffers(int64_t batch, int64_t len, const OutputRows& out);
  int64_t declare_inference_buffers(int64_t batch, int64_t len, int64_t out_rows);
  void ensure_workspace(int64_t batch, int64_t len, const OutputRows& out);
  void check_tokens(const int32_t* tokens, int64_t batch, int64_t len, int fields) const;
  // Embeddings (+ positions) of N = batch·len rows into out (N, D).
  void embed(const int32_t* tokens, int64_t batch, int64_t len, int fields, const T* sinusoid,
             T* out) const;
  // A norm's parameters over rows of `size` features (0: the width D).
  NormParams add_norm(const std::string& prefix, bool active, NormKind kind, int64_t size = 0);
  // The attention sublayer's per-head norms: part p of qkv (N, 3D) from the projection raw
  // (N, 3D), for rows = N rows; q_normed (N, D) keeps q̂ for the learnable scale's gradient
  // (null when not needed), mean and rstd (3, N·H) the statistics. Backward: d_qkv (N, 3D),
  // the gradient of qkv before RoPE, becomes in place the gradient of raw.
  void head_norms_forward(const SublayerParams& p, const T* raw, T* qkv, T* q_normed, T* mean,
                          T* rstd, int64_t rows) const;
  void head_norms_backward(const SublayerParams& p, const T* raw, const T* q_normed, const T* mean,
                           const T* rstd, T* d_qkv, int64_t rows);
  int64_t add_scale(const std::string& name, const ScaleSpec& spec);
  void add_hyper(const std::string& prefix, int i, HyperParams& hp);
  // Training: sublayer i's buffers in the workspace. Inference: the one set every sublayer
  // reuses.
  const SublayerBuffers<T>& train_buffers(int i) const;
  const SublayerBuffers<T>& eval_buffers() const;
  int last_attention_sublayer() const;
  // forward() up to the unembedding: returns its input (R, D), the final norm's output or
  // the stream's end, over the listed rows or all N; keep_logits: the workspace holds the
  // (R, V) logits that forward() writes.
  const T* forward_to_readout(const int32_t* tokens, int64_t batch, int64_t len, int fields,
                              const std::vector<int64_t>* rows, bool keep_logits);
  // The one sublayer forward of both passes (src/model/sublayer_forward.cpp).
  // branch_forward: z = N_out(f(s · N_in(x))) over `rows` rows of x (rows, D), written into b;
  // attention needs rows = B·T and has the strategy's output rows (all, or the listed ones).
  // Returns z: b.z, or b.y without an output norm.
  const T* branch_forward(int i, int64_t batch, int64_t len, const T* x, int64_t rows,
                          const SublayerBuffers<T>& b, const AttentionStrategy<T>& attention) const;
  // pos relative: attention sublayer p's terms for length len, its relative keys
  // r = p_δ W_R^T computed into b.rel_keys (core/kernels/relative.hpp).
  RelativeLogits<T> relative_logits(const SublayerParams& p, const SublayerBuffers<T>& b,
                                    int64_t len) const;
  // add_forward: out (rows, D) = N_post(a ⊙ x + b ⊙ z), or nGPT's x + α ⊙ (z − x); the sum
  // goes to b.r first when the sublayer has a post-norm.
  void add_forward(int i, const T* x, const T* z, const SublayerBuffers<T>& b, T* out,
                   int64_t rows) const;
  // Training backward of sublayer i's add, out = N_post(a ⊙ x + b ⊙ z) or nGPT's interpolation,
  // x (N, D) its residual input (two streams: x̂): d_out = dL/d(out) gives d_in = dL/dx by the
  // residual path, and returns dz = dL/dz (the workspace's, N × D). Without a residual path
  // (residual_path false: AttnRes, hyper-connections) d_in is 0 · dL/dr.
  T* add_backward(int i, const T* x, const T* d_out, T* d_in, bool residual_path);
  // Training backward of sublayer i's branch z = N_out(f(s · N_in(v))), v (N, D) its input:
  // dz gives dL/dv, added into d_v.
  void branch_backward(int i, int64_t batch, int64_t len, const T* v, const T* dz, T* d_v);
  // pos relative: attention's backward with Transformer-XL's terms, from the workspace's d_attn_o
  // into d_qkv and the gradients of u, v and W_R.
  // Training: the branch output of sublayer i that the stream took (N, D): N_out(f(u)), after
  // dropout when the step has it.
  const T* stream_branch(int i) const;
  // Training with attn_dropout and a key: attention sublayer i's mask (site S + 1 + i,
  // core/kernels/dropout.hpp) into `out`, and true; otherwise false.
  bool attention_dropout(int i, AttentionDropout& out) const;
  void relative_attention_backward(const SublayerParams& p, const SublayerBuffers<T>& sub,
                                   int64_t batch, int64_t len, const AttentionDropout* dropout);
  int hyper_streams() const { return config_.streams; }  // hyper-connections: n

  // The forward hooks' sites (src/model/hook_sites.cpp), each a no-op without hooks_. Names:
  // hook_block(i) is "blocks.l." of sublayer i, hook_kind(i) "attn" or "mlp". offer: values
  // (rows, width) in place, shaped (B, T, width...) when rows = B·T; true when a hook changed
  // them.
  std::string hook_block(int i) const;
  std::string hook_kind(int i) const;
  // (B, T, width...) for rows = B·T, else (rows, width...).
  std::vector<int64_t> hook_shape(int64_t rows, const std::vector<int64_t>& width) const;
  bool offer(const std::string& name, T* values, int64_t rows,
             const std::vector<int64_t>& width) const;
  // A norm's hook_scale (rows, 1), the TransformerLens scale 1/rstd, and hook_normalized
  // (rows, D) at `prefix`; a changed scale renormalizes its rows of y from x.
  void offer_norm(const std::string& prefix, const NormParams& p, const T* x, T* y, T* mean,
                  T* rstd, int64_t rows) const;
  // Attention sublayer i: hook_q, hook_k, hook_v (B, T, H, dh) of qkv (N, 3D) in place; then
  // hook_attn_scores and hook_pattern (B, H, T, T) and hook_z (B, T, H, dh) after attention
  // wrote probs (B, H, T, Tp) and o (N, D).
  void offer_qkv(int i, T* qkv) const;
  void offer_attention(int i, const T* qkv, T* probs, T* o,
                       const RelativeLogits<T>* relative) const;
  // The stream entering sublayer i (its hook_resid_pre or hook_resid_mid, after the previous
  // block's hook_resid_post), x (N, D) in place.
  void offer_stream(int i, T* x) const;
  // The gradient hooks' sites (src/model/gradient_sites.cpp), each a no-op without grad_hooks_:
  // d (rows, width) = dL/d(the activation at name), shaped as offer's.
  void offer_grad(const std::string& name, const T* d, int64_t rows,
                  const std::vector<int64_t>& width) const;
  // A norm's hook_normalized gradient dy (rows, D) and its hook_scale gradient, from its input x
  // and statistics: dL/ds = −r Σ_d dy_d (y_d − b_d) for y = (x − μ) r g + b, s = 1/r.
  void offer_norm_grad(const std::string& prefix, const NormParams& p, const T* x, const T* mean,
                       const T* rstd, const T* dy, int64_t rows) const;
  // Attention sublayer i: hook_z's gradient d_o (N, D), hook_pattern's dP = d_o · vᵀ and
  // hook_attn_scores' dS = P ⊙ (dP − Σ_k P dP) (B, H, T, T) per head (attention.hpp).
  void offer_attention_grads(int i, const T* qkv, const T* probs, const T* d_o) const;
  // hook_q, hook_k, hook_v's gradients in d_qkv (N, 3D).
  void offer_qkv_grads(int i, const T* d_qkv) const;

  ModelConfig config_;
  ResolvedScheme scheme_;
  ParamLayout layout_;
  std::vector<T> params_;
  std::vector<T> grads_;

  // Offsets of every tensor, by role.
  int64_t embed_ = -1;  // (V, D)
  int64_t pos_ = -1;    // (max_len, D), learned positions
  NormParams embed_norm_;
  std::vector<SublayerParams> sublayers_;
  int64_t final_res_query_ = -1;            // AttnRes: query of the final mixture (D)
  NormParams final_res_norm_;               // AttnRes: its key RMSNorm (gain, D)
  NormParams merge_x_norm_, merge_y_norm_;  // two streams: the norms of the output N(x) + N(y)
  NormParams final_norm_;
  int64_t unembed_ = -1;       // (V, D); equals embed_ when tied
  int64_t unembed_bias_ = -1;  // (V), readout_bias
  int64_t logit_scale_ = -1;   // (V), nGPT

  std::unique_ptr<Workspace> ws_;
  std::unique_ptr<EvalWorkspace> eval_;
  std::unique_ptr<ResidualStream<T>> residual_;    // the training pass's, by the scheme's mode
  std::unique_ptr<InferenceStream<T>> inference_;  // the inference pass's (with eval_)
  std::unique_ptr<QkvHook<T>> train_qkv_hook_, eval_qkv_hook_;  // each pass's
  std::optional<uint64_t> dropout_key_;                         // set_dropout_key
  ActivationHooks<T>* hooks_ = nullptr;                         // set_forward_hooks
  ActivationHooks<T>* grad_hooks_ = nullptr;                    // set_gradient_hooks
  // A hooked copy of sublayer i's input when the sublayer reads the stream itself (no input
  // norm): changing its hook_in changes what f reads, not the stream.
  mutable std::vector<std::vector<T>> hooked_inputs_;

  friend class AdditiveStream<T>;
  friend class AttnResStream<T>;
  friend class TwoStreams<T>;
  friend class HyperStreams<T>;
  friend class AdditiveInference<T>;
  friend class AttnResInference<T>;
  friend class TwoStreamsInference<T>;
  friend class HyperInference<T>;
};

// The parameter layout a config implies (names, shapes, offsets), without allocating any
// parameter: how a checkpoint's tensor table is checked before a model is built. Throws
// UsageError for an invalid config.
ParamLayout param_layout_of(const ModelConfig& config);

// The factor of the attention logits on ⟨q, k⟩ of the packed qkv buffer: beta / sqrt(dh), or
// beta under the l2 QK-norm, whose learnable scale s_h is already in q, or beta · sqrt(dh)
// under nGPT (the reference's softmax scale; s_qk is already in q and k).
double attention_scale(const ModelConfig& config);

// nGPT's learnable scales as the reference (NVIDIA/ngpt) parametrizes them: the optimizer
// sees a stored value p, initialized to `init`, and the model uses p · factor (alpha:
// |p| · factor), so that Adam's step on the used value is the learning rate times `factor`.
// With base = 1/sqrt(D): alpha init base, factor ngpt_alpha_init / base (0.05 at init);
// s_qk init base, factor 1/base (1); s_uv init 1, factor sqrt(D) (sqrt(D)); s_z init base,
// factor 1/base (1).
struct NgptScale {
  double init = 1.0;
  double factor = 1.0;
};
struct NgptScales {
  NgptScale alpha, s_qk, s_uv, s_z;
};
NgptScales ngpt_scales(const ModelConfig& config);

// The bytes a forward and backward pass over `batch` sequences of `len` tokens allocate (its
// activations, carved from one arena, with logits for every row) with values of `value_bytes`
// bytes; checked before the arena grows, and by experiment files before any run starts.
double activation_bytes_estimate(const ModelConfig& config, int64_t batch, int64_t len,
                                 size_t value_bytes);

extern template class Model<float>;
extern template class Model<double>;

}  // namespace normlab
