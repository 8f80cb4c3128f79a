// Dispersion of attention rows: the largest weight and the entropy of one query's softmax.
//
// For a query with logits s_j over the n keys it sees (j ≤ t when causal):
//   m = max_j s_j,  Z = Σ_j e^(s_j − m),  p_j = e^(s_j − m) / Z
//   max weight = max_j p_j = 1 / Z
//   entropy H = −Σ_j p_j ln p_j = ln Z − Σ_j p_j (s_j − m)        (nats; 0 ≤ H ≤ ln n)
// Uniform attention gives 1/n and ln n; attention on one key gives 1 and 0.
// Computed in double from the model's float q and k, one query at a time with O(n) scratch,
// so no (T, T) matrix is ever stored.
#pragma once

#include <cstdint>
#include <vector>

#include "normlab/model/model_config.hpp"

namespace normlab {
template <typename T>
struct SublayerTrace;  // normlab/model/model.hpp
}  // namespace normlab

namespace normlab {

struct AttentionRowStats {
  double max_weight = 0;  // max_j p_j
  double entropy = 0;     // −Σ p ln p, nats
  int64_t keys = 0;       // n, the keys the query sees
};

// The geometry of one attention sublayer's packed q|k|v buffer (B, T, 3D), as the model
// computes it: head h uses columns [h·dh, (h+1)·dh) of q, k and v; logits are
// scale·⟨q_t, k_j⟩ with scale = attention_scale(config) (model.hpp): beta / sqrt(dh), or beta
// under the l2 QK-norm; with ALiBi plus its bias.
struct AttentionGeometry {
  int64_t len = 0;  // T
  int width = 0;    // D
  int heads = 1;    // H
  bool causal = true;
  double scale = 1;
  bool alibi = false;  // logits + m_h · bias(t, j), ALiBi (ModelConfig::pos, docs/schemes.md)
  // pos relative: logits + scale · Transformer-XL's terms of the sublayer (SublayerTrace's
  // rel_u, rel_v (D) and rel_keys (2T − 1, D), src/core/kernels/relative.hpp).
  bool relative = false;
  const float *rel_u = nullptr, *rel_v = nullptr, *rel_keys = nullptr;
};

// The geometry of an attention sublayer; with pos relative, the trace's terms.
AttentionGeometry attention_geometry(const ModelConfig& config, const SublayerTrace<float>& trace);

// From a row of probabilities (n entries summing to 1).
AttentionRowStats attention_stats_from_probs(const float* p, int64_t n);
// From a row of logits (n entries); the softmax is taken here.
AttentionRowStats attention_stats_from_logits(const double* s, int64_t n);
// For query row n = b·T + t and head h of qkv (B, T, 3D). `scratch` is resized to T.
AttentionRowStats attention_query_stats(const AttentionGeometry& g, const float* qkv, int64_t n,
                                        int h, std::vector<double>& scratch);

}  // namespace normlab
