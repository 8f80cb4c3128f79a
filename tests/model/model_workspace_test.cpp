// The model keeps its activations in a workspace sized per (B, T) and reused (docs/design.md
// principle 5). One model run on a sequence of shapes — growing, shrinking, the same number of
// rows in another shape, and back — must give bit-identical logits and gradients to a fresh
// model run on each shape alone: nothing stale from an earlier call may leak into a later one.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "normlab/model.hpp"
#include "normlab/rng.hpp"

namespace normlab {
namespace {

struct Pass {
  std::vector<float> logits, grads;
};

Pass run(Model<float>& m, int64_t B, int64_t T, uint64_t seed) {
  Rng rng(seed);
  const int V = m.config().vocab;
  std::vector<int32_t> tokens(B * T);
  for (auto& t : tokens) t = static_cast<int32_t>(rng.below(V));
  std::vector<float> dlogits(B * T * V);
  for (auto& d : dlogits) d = static_cast<float>(rng.normal());
  Pass p;
  const float* logits = m.forward(tokens.data(), B, T);
  p.logits.assign(logits, logits + B * T * V);
  m.zero_grads();
  m.backward(dlogits.data());
  p.grads = m.grads();
  return p;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class WorkspaceReuse : public ::testing::TestWithParam<std::pair<Scheme, PosEncoding>> {};

TEST_P(WorkspaceReuse, ShapeSequenceMatchesFreshModels) {
  ModelConfig c;
  c.vocab = 11;
  c.width = 8;
  c.heads = 2;
  c.layers = 2;
  c.mlp_mult = 2;
  c.scheme = GetParam().first;
  c.norm = c.scheme == Scheme::ngpt ? NormKind::l2 : NormKind::layernorm;
  c.pos = GetParam().second;
  c.max_len = 16;
  c.init_std = 0.3;
  Model<float> reused(c);
  reused.init(4);
  // (3, 4) and (2, 6) have the same number of rows as each other; (2, 5) comes back at the end.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{2, 5}, {3, 4}, {2, 6},
                                                           {1, 9}, {4, 2}, {2, 5}};
  uint64_t seed = 100;
  for (auto [B, T] : shapes) {
    SCOPED_TRACE("B " + std::to_string(B) + ", T " + std::to_string(T));
    const Pass a = run(reused, B, T, seed);
    Model<float> fresh(c);
    fresh.init(4);
    const Pass b = run(fresh, B, T, seed);
    EXPECT_TRUE(same_bits(a.logits, b.logits)) << "logits";
    EXPECT_TRUE(same_bits(a.grads, b.grads)) << "gradients";
    ++seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, WorkspaceReuse,
                         ::testing::Values(std::pair{Scheme::pre, PosEncoding::rope},
                                           std::pair{Scheme::peri_init, PosEncoding::sinusoidal},
                                           std::pair{Scheme::ngpt, PosEncoding::learned},
                                           std::pair{Scheme::post, PosEncoding::none},
                                           std::pair{Scheme::deepnorm, PosEncoding::rope}),
                         [](const auto& info) {
                           return to_string(info.param.first) + "_" + to_string(info.param.second);
                         });

}  // namespace
}  // namespace normlab
