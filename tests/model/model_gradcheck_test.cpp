// Finite-difference check of the whole model: for every valid scheme × norm kind, a 2-layer
// model with MLP in double precision; the analytic gradient of the cross-entropy loss against
// central differences, per parameter tensor, relative error below 1e-6.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/kernels/cross_entropy.hpp"
#include "normlab/model.hpp"
#include "normlab/rng.hpp"

namespace normlab {
namespace {

struct Batch {
  std::vector<int32_t> tokens;
  std::vector<double> target;  // (N, V) soft targets
  std::vector<double> weight;  // (N) with some positions unscored
};

Batch make_batch(const ModelConfig& c, int64_t B, int64_t T, uint64_t seed) {
  Rng rng(seed);
  Batch b;
  const int64_t N = B * T;
  for (int64_t n = 0; n < N; ++n) b.tokens.push_back(static_cast<int32_t>(rng.below(c.vocab)));
  b.target.resize(N * c.vocab);
  for (int64_t n = 0; n < N; ++n) {
    double sum = 0;
    for (int v = 0; v < c.vocab; ++v) sum += b.target[n * c.vocab + v] = rng.uniform();
    for (int v = 0; v < c.vocab; ++v) b.target[n * c.vocab + v] /= sum;
    b.weight.push_back(n % 3 == 1 ? 0.0 : 1.0);
  }
  return b;
}

double loss_of(Model<double>& m, const Batch& b, int64_t B, int64_t T,
               std::vector<double>* dlogits) {
  const double* logits = m.forward(b.tokens.data(), B, T);
  return cross_entropy(logits, b.target.data(), b.weight.data(),
                       dlogits ? dlogits->data() : nullptr, B * T, m.config().vocab);
}

// Returns the worst per-tensor relative error and names it in `worst`.
double max_relative_error(Model<double>& m, const Batch& b, int64_t B, int64_t T,
                          std::string* worst) {
  std::vector<double> dlogits(B * T * m.config().vocab);
  loss_of(m, b, B, T, &dlogits);
  m.zero_grads();
  m.backward(dlogits.data());
  const std::vector<double> analytic = m.grads();
  double worst_err = 0;
  const double h = 1e-5;
  for (const TensorSpec& t : m.layout().tensors()) {
    double diff2 = 0, norm_a = 0, norm_n = 0;
    for (int64_t i = t.offset; i < t.offset + t.size; ++i) {
      const double saved = m.params()[i];
      m.params()[i] = saved + h;
      const double up = loss_of(m, b, B, T, nullptr);
      m.params()[i] = saved - h;
      const double down = loss_of(m, b, B, T, nullptr);
      m.params()[i] = saved;
      const double numeric = (up - down) / (2 * h);
      diff2 += (numeric - analytic[i]) * (numeric - analytic[i]);
      norm_a += analytic[i] * analytic[i];
      norm_n += numeric * numeric;
    }
    const double denom = std::sqrt(norm_a) + std::sqrt(norm_n);
    const double err = denom > 1e-12 ? std::sqrt(diff2) / denom : std::sqrt(diff2);
    if (err > worst_err) {
      worst_err = err;
      *worst = t.name;
    }
  }
  return worst_err;
}

struct Case {
  Scheme scheme;
  NormKind norm;
};

std::vector<Case> all_valid_cases() {
  std::vector<Case> cases;
  for (Scheme s : {Scheme::pre, Scheme::post, Scheme::peri, Scheme::peri_init, Scheme::post_attn,
                   Scheme::mix, Scheme::ngpt, Scheme::sqrt_scaling, Scheme::deepnorm}) {
    for (NormKind k : {NormKind::layernorm, NormKind::rmsnorm, NormKind::standardize, NormKind::l2,
                       NormKind::none}) {
      if (k == NormKind::none && s != Scheme::pre) continue;
      cases.push_back({s, k});
    }
  }
  return cases;
}

class ModelGradCheck : public ::testing::TestWithParam<Case> {};

TEST_P(ModelGradCheck, MatchesCentralDifferences) {
  ModelConfig c;
  c.vocab = 7;
  c.width = 8;
  c.heads = 2;
  c.layers = 2;
  c.mlp = true;
  c.mlp_mult = 2;
  c.scheme = GetParam().scheme;
  c.norm = GetParam().norm;
  c.mix_layers = 1;
  c.init_std = 0.4;  // large enough that every path carries signal
  c.pos = PosEncoding::learned;
  c.max_len = 8;
  Model<double> m(c);
  m.init(11);
  const Batch b = make_batch(c, 2, 5, 5);
  std::string worst;
  const double err = max_relative_error(m, b, 2, 5, &worst);
  EXPECT_LT(err, 1e-6) << "worst tensor: " << worst;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return to_string(info.param.scheme) + "_" + to_string(info.param.norm);
}

INSTANTIATE_TEST_SUITE_P(AllSchemesAllNorms, ModelGradCheck, ::testing::ValuesIn(all_valid_cases()),
                         case_name);

}  // namespace
}  // namespace normlab
