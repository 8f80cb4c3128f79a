// The depth probe: its numbers equal direct computations from the model's own accessors after
// an independent forward and backward of the same batch: the loss, every gradient norm (per
// tensor, per sublayer from the SublayerParams offsets rather than tensor names, per layer,
// total), stream and block-output RMS, and the collapse statistics of each sequence; also when
// the probe splits the batch into chunks of one sequence (up to float rounding).
#include "normlab/probes/depth_probe.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "normlab/probes/token_stats.hpp"
#include "normlab/train/train_step.hpp"

namespace normlab {
namespace {

double sq(const std::vector<float>& v, int64_t offset, int64_t size) {
  double s = 0;
  for (int64_t k = 0; k < size; ++k) s += double(v[offset + k]) * v[offset + k];
  return s;
}

// Σ g² over sublayer i's tensors, from the parameter offsets the model itself keeps.
double sublayer_grad_sq(const Model<float>& m, int i) {
  const ModelConfig& c = m.config();
  const SublayerParams& p = m.sublayer_params()[i];
  const int64_t D = c.width, M = c.mlp_hidden();
  const std::vector<float>& g = m.grads();
  double s = 0;
  auto norm = [&](const NormParams& n) {
    if (n.gain >= 0) s += sq(g, n.gain, D);
    if (n.bias >= 0) s += sq(g, n.bias, D);
  };
  norm(p.x_norm);  // nGPT's N(x) (no tensors under l2)
  norm(p.norm_in);
  norm(p.norm_out);
  norm(p.norm_post);
  s += sq(g, p.w_in, p.is_attention ? 3 * D * D : M * D);
  s += sq(g, p.w_out, p.is_attention ? D * D : D * M);
  if (p.alpha >= 0) s += sq(g, p.alpha, D);
  if (p.s_qk >= 0) s += sq(g, p.s_qk, D);  // nGPT's scales
  if (p.s_uv >= 0) s += sq(g, p.s_uv, M);
  return s;
}

double rms(const float* x, int64_t n) {
  double s = 0;
  for (int64_t k = 0; k < n; ++k) s += double(x[k]) * x[k];
  return std::sqrt(s / n);
}

class DepthProbe : public ::testing::TestWithParam<Scheme> {};

void check_depth_probe(Scheme scheme, int64_t max_memory) {
  ModelConfig c;
  c.vocab = 12;
  c.width = 16;
  c.heads = 2;
  c.layers = 3;
  c.scheme = scheme;
  c.norm = c.scheme == Scheme::ngpt ? NormKind::l2 : NormKind::layernorm;
  c.init_std = 0.2;
  Model<float> probed(c), direct(c);
  probed.init(4);
  direct.init(4);
  Rng rng(6);
  const Batch batch = random_next_token_batch(c.vocab, 3, 20, rng);
  const DepthResult r = run_depth_probe(probed, batch, max_memory);
  EXPECT_EQ(r.chunks, max_memory == 1 ? 3 : 1);
  // One pass gives the same operations as loss_and_grads; chunks sum their gradients.
  const double tol = max_memory == 1 ? 1e-5 : 1e-6;

  std::vector<float> dlogits;
  const double loss = loss_and_grads(direct, batch, dlogits);
  EXPECT_NEAR(r.loss, loss, 1e-6 * loss);
  const int S = direct.num_sublayers();
  const int64_t N = batch.batch * batch.len, D = c.width, T = batch.len;
  ASSERT_EQ(r.positions.size(), static_cast<size_t>(S + 1));
  // Tensors, groups and the total.
  const std::vector<float>& g = direct.grads();
  double total = 0;
  std::vector<double> layer_sq(c.layers, 0.0);
  ASSERT_EQ(r.tensors.size(), direct.layout().tensors().size());
  for (size_t k = 0; k < r.tensors.size(); ++k) {
    const TensorSpec& t = direct.layout().tensors()[k];
    const double s = sq(g, t.offset, t.size);
    EXPECT_EQ(r.tensors[k].name, t.name);
    EXPECT_NEAR(r.tensors[k].grad_norm, std::sqrt(s), tol * std::sqrt(s) + 1e-12) << t.name;
    EXPECT_NEAR(r.tensors[k].param_norm, std::sqrt(sq(direct.params(), t.offset, t.size)), 1e-5);
    total += s;
  }
  for (int i = 0; i < S; ++i) layer_sq[i / c.sublayers_per_layer()] += sublayer_grad_sq(direct, i);
  EXPECT_NEAR(r.grad_norm, std::sqrt(total), tol * std::sqrt(total));
  for (int l = 0; l < c.layers; ++l) {
    EXPECT_EQ(r.groups[1 + l].name, "layer " + std::to_string(l));
    EXPECT_NEAR(r.groups[1 + l].grad_norm, std::sqrt(layer_sq[l]), tol * std::sqrt(layer_sq[l]));
  }
  double group_total = 0;
  for (const DepthGroup& grp : r.groups) group_total += grp.grad_norm * grp.grad_norm;
  EXPECT_NEAR(group_total, r.grad_norm * r.grad_norm, 1e-9 * total)
      << "groups must partition the parameters";
  // Positions.
  for (int p = 0; p <= S; ++p) {
    const DepthPosition& d = r.positions[p];
    const float* h = direct.stream(p);
    EXPECT_NEAR(d.hidden_rms, rms(h, N * D), 1e-6 * d.hidden_rms) << p;
    double cos = 0, er = 0;
    for (int64_t b = 0; b < batch.batch; ++b) {
      cos += mean_pairwise_cosine(h + b * T * D, T, D);
      er += effective_rank(h + b * T * D, T, D);
    }
    EXPECT_NEAR(d.cosine, cos / batch.batch, 1e-6) << p;
    EXPECT_NEAR(d.erank, er / batch.batch, 1e-4) << p;
    if (p == S) {
      EXPECT_EQ(d.kind, "final");
      EXPECT_TRUE(std::isnan(d.grad_norm));
      continue;
    }
    EXPECT_EQ(d.kind, direct.sublayer_params()[p].is_attention ? "attn" : "mlp");
    EXPECT_NEAR(d.grad_norm, std::sqrt(sublayer_grad_sq(direct, p)), tol * d.grad_norm + 1e-12);
    EXPECT_NEAR(d.branch_rms, rms(direct.branch_output(p), N * D), 1e-6 * d.branch_rms) << p;
    if (direct.scheme().sublayers[p].norm_out) {
      EXPECT_NEAR(d.branch_normed_rms, rms(direct.branch_output_normed(p), N * D), 1e-5) << p;
    } else {
      EXPECT_TRUE(std::isnan(d.branch_normed_rms)) << p;
    }
  }
}

TEST_P(DepthProbe, NumbersEqualDirectComputation) {
  check_depth_probe(GetParam(), int64_t{256} << 20);
}

TEST_P(DepthProbe, ChunksOfOneSequenceGiveTheWholeBatchGradient) {
  check_depth_probe(GetParam(), 1);
}

INSTANTIATE_TEST_SUITE_P(Schemes, DepthProbe,
                         ::testing::Values(Scheme::pre, Scheme::post, Scheme::peri_init,
                                           Scheme::post_attn, Scheme::ngpt, Scheme::deepnorm),
                         [](const auto& info) { return to_string(info.param); });

// Block sums (docs/probes.md, depth): for block_attnres the probe sums the block's branch
// outputs, which must equal the model's own record of the block's last sublayer (the block sum
// b_n the next mixtures read, res_source); for pre, the sum of a block's outputs is what the
// block added to the stream, stream(last + 1) − stream(first). Six sublayers in blocks of four:
// the second block is partial. Also in chunks of one sequence.
TEST(DepthProbeBlocks, BlockRmsEqualsTheRecordOrTheStreamIncrement) {
  for (Scheme scheme : {Scheme::block_attnres, Scheme::pre}) {
    for (int64_t max_memory : {int64_t{256} << 20, int64_t{1}}) {
      SCOPED_TRACE(to_string(scheme) + (max_memory == 1 ? ", chunks" : ""));
      ModelConfig c;
      c.vocab = 12;
      c.width = 16;
      c.heads = 2;
      c.layers = 3;
      c.scheme = scheme;
      c.block_size = 4;
      c.init_std = 0.2;
      Model<float> probed(c), direct(c);
      probed.init(8);
      direct.init(8);
      if (scheme == Scheme::block_attnres) {  // non-uniform mixtures: random queries
        for (Model<float>* m : {&probed, &direct}) {
          Rng rq(3);
          for (int l = 0; l <= m->num_sublayers(); ++l) {
            for (int d = 0; d < c.width; ++d) {
              m->params()[m->res_query_offset(l) + d] = static_cast<float>(rq.normal());
            }
          }
        }
      }
      Rng rng(6);
      const Batch batch = random_next_token_batch(c.vocab, 3, 20, rng);
      const DepthResult r =
          run_depth_probe(probed, batch, max_memory, scheme == Scheme::pre ? 4 : 0);
      direct.forward(batch.tokens.data(), batch.batch, batch.len);
      const int64_t N = batch.batch * batch.len, D = c.width;
      EXPECT_EQ(r.block_size, 4);
      ASSERT_EQ(r.blocks.size(), 2u);
      EXPECT_EQ(r.blocks[1].first, 4);
      EXPECT_EQ(r.blocks[1].last, 5);
      for (const DepthBlock& b : r.blocks) {
        std::vector<float> sum(N * D);
        if (scheme == Scheme::block_attnres) {
          const float* rec = direct.res_source(b.last + 1);
          std::copy_n(rec, N * D, sum.begin());
        } else {
          const float* hi = direct.stream(b.last + 1);
          const float* lo = direct.stream(b.first);
          for (int64_t k = 0; k < N * D; ++k) sum[k] = hi[k] - lo[k];
        }
        const double expected = rms(sum.data(), N * D);
        EXPECT_GT(expected, 1e-3);
        EXPECT_NEAR(b.rms, expected, 1e-4 * expected) << "block " << b.block;
      }
    }
  }
}

}  // namespace
}  // namespace normlab
