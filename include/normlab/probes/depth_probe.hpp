// The depth probe (PreNorm dilution and per-layer gradients, arXiv 2603.15031; token collapse, seed
// 001): one batch, a training forward and backward (gradients of the mean cross-entropy over
// the scored positions, over the logits the training loss took; no optimizer step), then per
// position in the stack:
//
//   stream position p = 0 .. S (S sublayers; p < S: the stream entering sublayer p, p = S: the
//   stream leaving the last one), over the B·T token vectors h_t (D):
//     hidden_norm  mean_t ‖h_t‖₂          hidden_rms  sqrt(mean_t ‖h_t‖² / D)
//     cosine       mean over sequences of the mean pairwise cosine of its T tokens (self pairs
//                  excluded; token_stats.hpp)
//     erank        mean over sequences of the entropy effective rank of its (T, D) token
//                  matrix (uncentered; singular values by LAPACK; token_stats.hpp)
//   sublayer p < S:
//     branch_rms         sqrt(mean_t ‖y_t‖² / D), y = f(u) the block's output before any norm
//     branch_normed_rms  the same after the output norm (schemes with one; else NaN)
//     grad_norm          sqrt(Σ ‖∂L/∂θ‖²) over the sublayer's parameter tensors
//     param_norm         sqrt(Σ ‖θ‖²) over the same tensors
// per block n = 1 .. ⌈S/K⌉ of K consecutive sublayers (sublayers (n−1)K .. min(nK, S) − 1):
//     block_rms          sqrt(mean_t ‖b_t‖² / D),  b = Σ_{j ∈ block n} z_j, z_j the sublayer's
//                        output after its output norm (the branch the stream receives). For
//                        block_attnres this is the block sum b_n of docs/attnres.md (K its block
//                        size; attnres K = 1); for additive schemes the same sum over the same
//                        groups, so both can be compared block by block
// and for every parameter tensor its gradient and parameter norms (Frobenius), with groups:
// "embedding" (embed, pos, embed_norm), "layer l" (layers.l.*), "output" (final_norm,
// unembed, logit_scale).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "normlab/base/batch.hpp"
#include "normlab/model/model.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab {

struct DepthPosition {
  int position = 0;        // p
  int layer = 0;           // block of sublayer p (p = S: L)
  std::string kind;        // "attn", "mlp", or "final" (p = S)
  double hidden_norm = 0;  // of the stream at p
  double hidden_rms = 0;
  double cosine = 0;
  double erank = 0;
  double branch_rms = 0;         // sublayer p (NaN at p = S)
  double branch_normed_rms = 0;  // NaN without an output norm
  double grad_norm = 0;          // sublayer p's parameters (NaN at p = S)
  double param_norm = 0;
};

struct DepthBlock {
  int block = 0;            // n ≥ 1 (the embedding, block 0, is not listed)
  int first = 0, last = 0;  // its sublayers, inclusive
  double rms = 0;           // block_rms
};

struct DepthTensor {
  std::string name;
  std::string group;  // "embedding", "layer l", "output"
  int layer = -1;     // l for layers.l.*
  int64_t size = 0;
  double grad_norm = 0, param_norm = 0;
};

struct DepthGroup {
  std::string name;
  int layer = -1;
  int64_t size = 0;
  double grad_norm = 0, param_norm = 0;
};

struct DepthResult {
  double loss = 0;
  int64_t batch = 0, seq_len = 0;
  int layers = 0, sublayers = 0;
  std::vector<DepthPosition> positions;  // S + 1
  std::vector<DepthTensor> tensors;      // layout order
  std::vector<DepthGroup> groups;        // embedding, layer 0 .. L−1, output
  int block_size = 0;                    // K, sublayers per block
  std::vector<DepthBlock> blocks;        // ⌈S/K⌉
  double grad_norm = 0;                  // all parameters
  int64_t chunks = 0;                    // forward/backward passes (sequences per chunk ≥ 1)
  double seconds_forward_backward = 0, seconds_stats = 0;
};

// Bytes of training activations (forward and backward) per token of a sequence of length T,
// an upper bound from the model's buffers.
int64_t depth_bytes_per_token(const ModelConfig& config, int64_t T);

// Leaves the batch's gradients in model.grads(). The batch goes through the model in chunks of
// whole sequences whose training activations fit in max_memory bytes (at least one sequence
// per chunk); chunk gradients are weighted by their share of the scored positions, so the
// result is the gradient of the whole batch's mean cross-entropy. block_size: K of an
// additive scheme's block sums (0: the config's block_size); AttnRes schemes use their own.
// over: the logits the cross-entropy is taken over (the training loss's, train.loss_over;
// nullopt: the whole vocabulary).
DepthResult run_depth_probe(Model<float>& model, const Batch& batch,
                            int64_t max_memory = int64_t{256} << 20, int block_size = 0,
                            const std::optional<TokenBlock>& over = std::nullopt);

// Per stream position: position,layer,kind,hidden_norm,hidden_rms,cosine,erank,branch_rms,
// branch_normed_rms,grad_norm,param_norm
std::string depth_csv(const DepthResult& r);
// Per tensor, then per group: name,group,layer,size,grad_norm,param_norm
std::string depth_params_csv(const DepthResult& r);
// Per block: block,first_sublayer,last_sublayer,block_size,block_rms
std::string depth_blocks_csv(const DepthResult& r);
nlohmann::json depth_json(const DepthResult& r);
// One line per layer: stream entering it, attention and MLP output, gradient, collapse.
std::string format_depth_table(const DepthResult& r);

}  // namespace normlab
