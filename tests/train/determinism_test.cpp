// Determinism (docs/design.md principle 8): the same config and seed give bit-identical numbers,
// whatever the thread count.
//
// For every implemented scheme, a model whose B·T = 1024 rows split into four row shards
// (kRowShard = 256) takes several AdamW train steps with 1 thread and again with 2 threads;
// losses, gradient norms, logits, gradients, parameters and optimizer moments must agree bit
// for bit. A second 2-thread run must agree as well (repeatability).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "normlab/base/batch.hpp"
#include "normlab/model/model.hpp"
#include "normlab/optim/adamw.hpp"
#include "normlab/train/train_step.hpp"

namespace normlab {
namespace {

constexpr int kSteps = 2;
// N = B·T = 1024 rows: 4 row shards. Short sequences keep attention (B·T² work) cheap.
constexpr int64_t kBatch = 32, kLen = 32;

struct RunRecord {
  std::vector<double> losses, grad_norms;
  std::vector<float> logits, grads, params, m, v;
};

struct SchemeCase {
  Scheme scheme;
  NormKind norm;
  PosEncoding pos;
  // 16 keeps every linear layer on the small kernels (small_linear.hpp); 64 puts them all on
  // OpenBLAS, whose weight gradients are summed per row shard (gemm.hpp).
  int width = 16;
  int heads = 2;
};

RunRecord run(const SchemeCase& sc, int threads) {
  const int saved = num_threads();
  set_num_threads(threads);
  ModelConfig c;
  c.vocab = 24;
  c.width = sc.width;
  c.heads = sc.heads;
  c.layers = 2;
  c.mlp_mult = 2;
  c.scheme = sc.scheme;
  c.norm = sc.norm;
  c.pos = sc.pos;
  c.max_len = kLen;
  c.mix_layers = 1;
  Model<float> model(c);
  model.init(1234);
  AdamW opt(model.layout(), AdamWConfig{}, model.scheme().weight_decay);
  Rng rng(99);
  std::vector<float> dlogits;
  RunRecord r;
  for (int step = 0; step < kSteps; ++step) {
    const Batch b = random_next_token_batch(c.vocab, kBatch, kLen, rng);
    const StepResult s = train_step(model, opt, b, 3e-3, dlogits);
    r.losses.push_back(s.loss);
    r.grad_norms.push_back(s.grad_norm);
  }
  r.grads = model.grads();  // of the last step
  const Batch b = random_next_token_batch(c.vocab, kBatch, kLen, rng);
  const float* logits = model.forward(b.tokens.data(), kBatch, kLen);
  r.logits.assign(logits, logits + kBatch * kLen * c.vocab);
  r.params = model.params();
  r.m = opt.first_moment();
  r.v = opt.second_moment();
  set_num_threads(saved);
  return r;
}

// Bitwise equality, with the first differing index in the message.
template <typename T>
::testing::AssertionResult same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) {
      return ::testing::AssertionFailure()
             << "first difference at index " << i << ": " << a[i] << " vs " << b[i];
    }
  }
  return ::testing::AssertionSuccess();
}

void expect_identical(const RunRecord& a, const RunRecord& b) {
  EXPECT_TRUE(same_bits(a.losses, b.losses)) << "losses";
  EXPECT_TRUE(same_bits(a.grad_norms, b.grad_norms)) << "grad norms";
  EXPECT_TRUE(same_bits(a.logits, b.logits)) << "logits";
  EXPECT_TRUE(same_bits(a.grads, b.grads)) << "gradients";
  EXPECT_TRUE(same_bits(a.params, b.params)) << "parameters";
  EXPECT_TRUE(same_bits(a.m, b.m)) << "AdamW first moment";
  EXPECT_TRUE(same_bits(a.v, b.v)) << "AdamW second moment";
}

class Determinism : public ::testing::TestWithParam<SchemeCase> {};

TEST_P(Determinism, OneAndTwoThreadsGiveIdenticalBits) {
  const RunRecord one = run(GetParam(), 1);
  const RunRecord two = run(GetParam(), 2);
  // The runs did something: the loss is finite and the parameters moved.
  ASSERT_TRUE(std::isfinite(one.losses.back()));
  ASSERT_GT(one.grad_norms.front(), 0.0);
  expect_identical(one, two);
  expect_identical(two, run(GetParam(), 2));
}

std::vector<SchemeCase> cases() {
  // Every implemented scheme; norms and positions vary so that every norm kind (with its gain
  // and bias reductions) and every positional encoding is covered.
  return {
      {Scheme::pre, NormKind::layernorm, PosEncoding::learned},
      {Scheme::post, NormKind::rmsnorm, PosEncoding::rope},
      {Scheme::peri, NormKind::standardize, PosEncoding::sinusoidal},
      {Scheme::peri_init, NormKind::layernorm, PosEncoding::rope},
      {Scheme::post_attn, NormKind::rmsnorm, PosEncoding::none},
      {Scheme::mix, NormKind::layernorm, PosEncoding::learned},
      {Scheme::ngpt, NormKind::l2, PosEncoding::rope},
      {Scheme::sqrt_scaling, NormKind::rmsnorm, PosEncoding::learned},
      {Scheme::deepnorm, NormKind::layernorm, PosEncoding::none},
      {Scheme::pre, NormKind::none, PosEncoding::learned},
      {Scheme::attnres, NormKind::rmsnorm, PosEncoding::rope},
      {Scheme::block_attnres, NormKind::layernorm, PosEncoding::learned},
      {Scheme::pre, NormKind::rmsnorm, PosEncoding::rope, 64, 4},
      {Scheme::block_attnres, NormKind::rmsnorm, PosEncoding::none, 64, 4},
  };
}

INSTANTIATE_TEST_SUITE_P(AllSchemes, Determinism, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<SchemeCase>& info) {
                           return to_string(info.param.scheme) + "_" + to_string(info.param.norm) +
                                  "_" + to_string(info.param.pos) + "_width" +
                                  std::to_string(info.param.width);
                         });

}  // namespace
}  // namespace normlab
