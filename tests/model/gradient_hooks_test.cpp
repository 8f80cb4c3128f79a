// Gradient hooks (include/normlab/model/activation_hooks.hpp): the gradient the backward offers
// at each name is the derivative of the loss with respect to the activation that the forward
// hook of the same name changes. Checked in double by central differences through the forward
// hooks, at three elements of every name the backward offers, under each residual mode.
//
// Loss L = Σ logits ⊙ W with fixed random W (B, T, V), so dL/dlogits = W. Central differences
// at h = 1e-5: truncation h²/6 · |L'''| and rounding ~1e-16 · |L| / h, both below 1e-9 for these
// O(1) models; the tolerance 1e-7 · (1 + |g|) leaves two orders of margin and is still far below
// any wrong gradient (an omitted term or a missed factor is O(|g|)).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "normlab/base/rng.hpp"
#include "normlab/model/activation_hooks.hpp"
#include "normlab/model/model.hpp"

namespace normlab {
namespace {

struct Gradient {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

struct GradientRecorder : ActivationHooks<double> {
  std::map<std::string, Gradient> grads;
  bool wants(const std::string&) override { return true; }
  bool visit(const std::string& name, double* values, const std::vector<int64_t>& shape) override {
    int64_t count = 1;
    for (int64_t s : shape) count *= s;
    grads[name] = {shape, std::vector<double>(values, values + count)};
    return false;
  }
};

// A forward hook that adds `delta` to element k of the activation at `name`.
struct Nudge : ActivationHooks<double> {
  std::string name;
  int64_t k = 0;
  double delta = 0;
  bool wants(const std::string& n) override { return n == name; }
  bool visit(const std::string&, double* values, const std::vector<int64_t>&) override {
    values[k] += delta;
    return true;
  }
};

constexpr int64_t kB = 2, kT = 4;

double loss(Model<double>& m, const std::vector<int32_t>& tokens, const std::vector<double>& w) {
  const double* logits = m.forward(tokens.data(), kB, kT);
  double sum = 0;
  for (size_t k = 0; k < w.size(); ++k) sum += logits[k] * w[k];
  return sum;
}

class GradientHooks : public ::testing::TestWithParam<Scheme> {};

TEST_P(GradientHooks, EveryGradientIsTheDerivativeAtItsForwardHook) {
  ModelConfig c;
  c.vocab = 7;
  c.width = 8;
  c.heads = 2;
  c.layers = 2;
  c.mlp_mult = 2;
  c.scheme = GetParam();
  c.norm = c.scheme == Scheme::ngpt ? NormKind::l2 : NormKind::layernorm;
  c.init_std = 0.3;
  Model<double> m(c);
  m.init(11);
  Rng rng(5);
  std::vector<int32_t> tokens(kB * kT);
  for (auto& t : tokens) t = static_cast<int32_t>(rng.below(c.vocab));
  std::vector<double> w(kB * kT * c.vocab);
  for (auto& x : w) x = rng.normal();

  GradientRecorder recorder;
  m.set_gradient_hooks(&recorder);
  m.forward(tokens.data(), kB, kT);
  m.zero_grads();
  m.backward(w.data());
  m.set_gradient_hooks(nullptr);
  ASSERT_GE(recorder.grads.size(), 20u);

  const double h = 1e-5;
  Nudge nudge;
  m.set_forward_hooks(&nudge);
  for (const auto& [name, g] : recorder.grads) {
    const int64_t count = static_cast<int64_t>(g.values.size());
    for (int64_t k : {int64_t{0}, count / 2, count - 1}) {
      nudge.name = name;
      nudge.k = k;
      nudge.delta = h;
      const double up = loss(m, tokens, w);
      nudge.delta = -h;
      const double down = loss(m, tokens, w);
      const double fd = (up - down) / (2 * h);
      EXPECT_NEAR(g.values[k], fd, 1e-7 * (1 + std::abs(fd))) << name << " element " << k;
    }
  }
  m.set_forward_hooks(nullptr);
}

INSTANTIATE_TEST_SUITE_P(ResidualModes, GradientHooks,
                         ::testing::Values(Scheme::pre, Scheme::post, Scheme::peri, Scheme::ngpt,
                                           Scheme::attnres, Scheme::block_attnres,
                                           Scheme::hyper_connections, Scheme::resformer,
                                           Scheme::sandwich),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
}  // namespace normlab
