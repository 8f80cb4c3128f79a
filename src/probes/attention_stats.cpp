#include "normlab/probes/attention_stats.hpp"

#include <algorithm>
#include <cmath>

#include <stdexcept>

#include "core/kernels/alibi.hpp"
#include "core/kernels/relative.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

AttentionGeometry attention_geometry(const ModelConfig& c, const SublayerTrace<float>& trace) {
  // The same scale as Model::forward and forward_rows.
  AttentionGeometry g{
      trace.len, c.width, c.heads, c.causal, attention_scale(c), c.pos == PosEncoding::alibi};
  if (c.pos == PosEncoding::relative) {
    if (trace.rel_keys == nullptr) {
      throw std::logic_error("attention_geometry: pos relative without the trace's relative keys");
    }
    g.relative = true;
    g.rel_u = trace.rel_u;
    g.rel_v = trace.rel_v;
    g.rel_keys = trace.rel_keys;
  }
  return g;
}

AttentionRowStats attention_stats_from_probs(const float* p, int64_t n) {
  AttentionRowStats r;
  r.keys = n;
  double h = 0, mx = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double q = p[j];
    mx = std::max(mx, q);
    if (q > 0) h -= q * std::log(q);
  }
  r.max_weight = mx;
  r.entropy = h;
  return r;
}

AttentionRowStats attention_stats_from_logits(const double* s, int64_t n) {
  AttentionRowStats r;
  r.keys = n;
  double m = -INFINITY;
  for (int64_t j = 0; j < n; ++j) m = std::max(m, s[j]);
  double z = 0, a = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double e = std::exp(s[j] - m);
    z += e;
    a += e * (s[j] - m);
  }
  r.max_weight = 1.0 / z;
  // ln Z − E_p[s − m]; both terms are ≥ 0, and rounding may leave −1e-17 for one-hot rows.
  r.entropy = std::max(0.0, std::log(z) - a / z);
  return r;
}

AttentionRowStats attention_query_stats(const AttentionGeometry& g, const float* qkv, int64_t n,
                                        int h, std::vector<double>& scratch) {
  const int64_t T = g.len, row = 3 * static_cast<int64_t>(g.width);
  const int dh = g.width / g.heads;
  const int64_t b = n / T, t = n % T;
  const float* base = qkv + b * T * row + h * dh;
  const float* q = base + t * row;
  const int64_t keys = g.causal ? t + 1 : T;
  if (static_cast<int64_t>(scratch.size()) < keys) scratch.resize(T);
  for (int64_t j = 0; j < keys; ++j) {
    const float* k = base + j * row + g.width;
    double dot = 0;
    for (int c = 0; c < dh; ++c) dot += static_cast<double>(q[c]) * k[c];
    if (g.relative) {
      const RelativeLogits<float> rel{g.rel_u, g.rel_v, g.rel_keys};
      dot += relative_term<double>(rel, T, g.width, h * dh, dh, q, k, t, j);
    }
    scratch[j] = g.scale * dot;
    if (g.alibi) scratch[j] += alibi_slope(h, g.heads) * alibi_bias(t, j, g.causal);
  }
  return attention_stats_from_logits(scratch.data(), keys);
}

}  // namespace normlab
