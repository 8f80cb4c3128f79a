// The model keeps its activations in one arena carved per (B, T, listed rows) and reused
// (docs/design.md principle 5; src/model/arena.hpp). One model run on a sequence of shapes —
// growing, shrinking, the same number of rows in another shape, listed rows and all rows, and
// back — must give bit-identical logits and gradients to a fresh model run on each shape alone:
// nothing stale from an earlier call may leak into a later one, whatever the residual mode.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"

namespace normlab {
namespace {

struct Pass {
  std::vector<float> logits, grads;
};

// With `listed`, logits for every third row only.
Pass run(Model<float>& m, int64_t B, int64_t T, uint64_t seed, bool listed = false) {
  Rng rng(seed);
  const int V = m.config().vocab;
  std::vector<int32_t> tokens(B * T);
  for (auto& t : tokens) t = static_cast<int32_t>(rng.below(V));
  std::vector<int64_t> rows;
  for (int64_t n = 1; n < B * T; n += 3) rows.push_back(n);
  const int64_t R = listed ? static_cast<int64_t>(rows.size()) : B * T;
  std::vector<float> dlogits(R * V);
  for (auto& d : dlogits) d = static_cast<float>(rng.normal());
  Pass p;
  const float* logits = m.forward(tokens.data(), B, T, 1, listed ? &rows : nullptr);
  p.logits.assign(logits, logits + R * V);
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
  // (3, 4) and (2, 6) have the same number of rows as each other; (2, 5) comes back at the end,
  // first with listed rows, then with all.
  struct Shape {
    int64_t B, T;
    bool listed;
  };
  const std::vector<Shape> shapes = {{2, 5, false}, {3, 4, false}, {2, 6, true}, {2, 6, false},
                                     {1, 9, false}, {4, 2, true},  {2, 5, true}, {2, 5, false}};
  uint64_t seed = 100;
  for (auto [B, T, listed] : shapes) {
    SCOPED_TRACE("B " + std::to_string(B) + ", T " + std::to_string(T) +
                 (listed ? ", listed rows" : ""));
    const Pass a = run(reused, B, T, seed, listed);
    Model<float> fresh(c);
    fresh.init(4);
    const Pass b = run(fresh, B, T, seed, listed);
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
                                           std::pair{Scheme::deepnorm, PosEncoding::rope},
                                           std::pair{Scheme::hybridnorm, PosEncoding::learned},
                                           std::pair{Scheme::attnres, PosEncoding::sinusoidal},
                                           std::pair{Scheme::block_attnres, PosEncoding::rope},
                                           std::pair{Scheme::resi_dual, PosEncoding::none},
                                           std::pair{Scheme::siamesenorm, PosEncoding::rope},
                                           std::pair{Scheme::hyper_connections, PosEncoding::none},
                                           std::pair{Scheme::resformer, PosEncoding::rope}),
                         [](const auto& info) {
                           return to_string(info.param.first) + "_" + to_string(info.param.second);
                         });

}  // namespace
}  // namespace normlab
