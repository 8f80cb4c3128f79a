#include "normlab/bench/flops.hpp"

namespace normlab {

double forward_flops(const ModelConfig& c, int64_t batch, int64_t len) {
  const double N = static_cast<double>(batch) * len;
  const double D = c.width, V = c.vocab, M = c.mlp_hidden();
  const double pairs = c.causal ? len * (len + 1) / 2.0 : static_cast<double>(len) * len;
  double per_layer = 2 * N * D * 3 * D             // q, k, v
                     + 2 * N * D * D               // output projection
                     + 2 * 2 * batch * pairs * D;  // scores and weighted values, all heads
  if (c.mlp) per_layer += 2 * 2 * N * D * M;
  return c.layers * per_layer + 2 * N * D * V;  // + unembedding
}

double train_step_flops(const ModelConfig& c, int64_t batch, int64_t len, int64_t parameters) {
  return 3 * forward_flops(c, batch, len) + 12.0 * static_cast<double>(parameters);
}

}  // namespace normlab
