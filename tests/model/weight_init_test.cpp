// weight_init and embed_init_std (model_config.hpp, src/model/model_layout.cpp): the default
// draws the bits it drew before the fields existed; truncated_fan_in draws Haiku's
// TruncatedNormal(1/√fan_in), cut at ±2σ and not rescaled, with the embeddings' own σ; the
// fields reach the config through JSON and the field list, and are left out at their defaults.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string>
#include <vector>

#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"
#include "normlab/model/model_fields.hpp"
#include "normlab/model/scheme.hpp"
#include "support/config_line.hpp"

namespace normlab {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A copy of the init rule as it was before weight_init existed: every matrix and embedding
// N(0, σ²) drawn in layout order from one Rng(seed), σ = init_std; v and MLP up × the scheme's
// branch factor; o and MLP down × the branch factor and, with GPT-2's scaled init, / √(2L);
// relative encoding's u and v σ = 0.02; everything else its constant.
std::vector<float> old_rule_params(const ModelConfig& c, const ParamLayout& layout, uint64_t seed) {
  const ResolvedScheme s = resolve_scheme(c);
  const double std = c.init_std;
  const double residual_std =
      (c.scaled_residual_init && s.gpt2_scaled_init) ? std / std::sqrt(2.0 * c.layers) : std;
  const double branch = s.branch_init_scale;
  Rng rng(seed);
  std::vector<float> out(layout.total(), 0.0f);
  for (const TensorSpec& t : layout.tensors()) {
    const std::string& n = t.name;
    double sigma = -1;
    if (n == "embed.weight" || n == "pos.weight" || n == "unembed.weight" ||
        ends_with(n, ".q.weight") || ends_with(n, ".k.weight") || ends_with(n, ".rel.weight")) {
      sigma = std;
    } else if (ends_with(n, ".v.weight") || ends_with(n, ".up.weight")) {
      sigma = std * branch;
    } else if (ends_with(n, ".o.weight") || ends_with(n, ".down.weight")) {
      sigma = residual_std * branch;
    } else if (ends_with(n, ".rel_u") || ends_with(n, ".rel_v")) {
      sigma = 0.02;
    }
    for (int64_t i = 0; i < t.size; ++i) {
      out[t.offset + i] =
          sigma >= 0 ? static_cast<float>(rng.normal() * sigma) : static_cast<float>(t.init_value);
    }
  }
  return out;
}

// FNV-1a over the parameters' bytes.
uint64_t checksum(const std::vector<float>& v) {
  uint64_t h = 1469598103934665603ULL;
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i) {
    h ^= bytes[i];
    h *= 1099511628211ULL;
  }
  return h;
}

TEST(WeightInit, DefaultDrawsTheBitsOfTheOldRule) {
  for (const char* line : {"scheme=pre pos=learned", "scheme=pre pos=relative scaled_init=false",
                           "scheme=deepnorm pos=relative heads=2 norm=layernorm",
                           "scheme=post pos=rope init_std=0.125"}) {
    ModelConfig c = testing::config_line(line, {});
    c.width = 16;
    c.layers = 3;
    c.max_len = 32;
    Model<float> m(c);
    m.init(7);
    for (const TensorSpec& t : m.layout().tensors()) {
      EXPECT_NE(t.init, InitKind::truncated_normal) << line << ": " << t.name;
    }
    const std::vector<float> expected = old_rule_params(c, m.layout(), 7);
    ASSERT_EQ(m.params().size(), expected.size()) << line;
    EXPECT_EQ(std::memcmp(m.params().data(), expected.data(), expected.size() * sizeof(float)), 0)
        << line;
  }
}

// The default config's parameters after init(1): the copy of the old rule gives them, and the
// value is hard-coded so that a later change of the default path shows here too.
TEST(WeightInit, DefaultConfigChecksum) {
  Model<float> m{ModelConfig{}};
  m.init(1);
  EXPECT_EQ(checksum(m.params()), 0xede81000554805f9ULL) << std::hex << checksum(m.params());
  EXPECT_EQ(checksum(old_rule_params(ModelConfig{}, m.layout(), 1)), 0xede81000554805f9ULL);
}

// Delétang et al.'s encoder as experiments/chomsky_hierarchy.toml sets it: D = 64, MLP 256,
// relative encoding, embeddings σ = 0.02 (vocab 64 so that the embedding has as many values as
// a square matrix).
ModelConfig reference_like() {
  ModelConfig c = testing::config_line(
      "scheme=post norm=layernorm pos=relative causal=false activation=relu scaled_init=false "
      "weight_init=truncated_fan_in embed_init_std=0.02",
      {});
  c.vocab = 64;
  c.width = 64;
  c.heads = 8;
  c.layers = 2;
  c.mlp_mult = 4;
  return c;
}

TEST(WeightInit, TruncatedFanInLayout) {
  const ModelConfig c = reference_like();
  const ParamLayout layout = param_layout_of(c);
  int matrices = 0;
  for (const TensorSpec& t : layout.tensors()) {
    const std::string& n = t.name;
    if (ends_with(n, ".rel_u") || ends_with(n, ".rel_v")) {  // hk RandomNormal(0.02)
      EXPECT_EQ(t.init, InitKind::normal) << n;
      EXPECT_EQ(t.init_value, 0.02) << n;
    } else if (n == "embed.weight") {
      EXPECT_EQ(t.init, InitKind::truncated_normal);
      EXPECT_EQ(t.init_value, 0.02);
    } else if (ends_with(n, ".down.weight")) {  // fan-in 256
      EXPECT_EQ(t.init, InitKind::truncated_normal) << n;
      EXPECT_EQ(t.init_value, 1.0 / 16.0) << n;
      ++matrices;
    } else if (t.decay) {  // q, k, v, o, W_R, MLP up, unembedding: fan-in 64
      EXPECT_EQ(t.init, InitKind::truncated_normal) << n;
      EXPECT_EQ(t.init_value, 1.0 / 8.0) << n;
      ++matrices;
    } else {
      EXPECT_EQ(t.init, InitKind::constant) << n;
    }
  }
  EXPECT_EQ(matrices, 2 * 7 + 1);  // per layer q, k, v, o, W_R, up, down; the unembedding
}

// The std of N(0, 1) truncated at ±2: √(1 − 4φ(2) / (Φ(2) − Φ(−2))).
double truncated_std() {
  const double phi2 = std::exp(-2.0) / std::sqrt(2.0 * std::numbers::pi);
  const double mass = std::erf(2.0 / std::sqrt(2.0));
  return std::sqrt(1.0 - 4.0 * phi2 / mass);
}

TEST(WeightInit, TruncatedFanInValues) {
  EXPECT_NEAR(truncated_std(), 0.8796, 1e-4);
  const ModelConfig c = reference_like();
  Model<float> m(c);
  m.init(3);
  // Values per nominal σ, pooled over the tensors of that σ, and the embedding's alone.
  std::map<double, std::vector<double>> by_sigma;
  std::vector<double> embed;
  for (const TensorSpec& t : m.layout().tensors()) {
    if (t.init != InitKind::truncated_normal) continue;
    for (int64_t i = 0; i < t.size; ++i) {
      const double x = m.params()[t.offset + i];
      // Every value within ±2σ (the float's rounding aside).
      ASSERT_LE(std::abs(x), 2.0 * t.init_value * (1 + 1e-6)) << t.name << "[" << i << "]";
      (t.name == "embed.weight" ? embed : by_sigma[t.init_value]).push_back(x / t.init_value);
    }
  }
  by_sigma[0.02] = embed;
  ASSERT_EQ(by_sigma.size(), 3u);  // 0.02 (the embedding), 1/16 (MLP down), 1/8 (the rest)
  // The sample std of n draws z of the truncated normal: Var(z²) = E z⁴ − (E z²)² = 0.8175
  // (E z⁴ = 3 E z² − 2·2³φ(2)/(Φ(2) − Φ(−2)) = 1.4162, E z² = 0.7737), so the sample variance
  // has standard error √(0.8175 / n) and the sample std about √(0.8175 / n) / (2 · 0.8796) =
  // 0.514 / √n. The tolerance is 5 of those: a false failure has probability below 1e-6, and an
  // untruncated normal (std 1, 0.12 away) fails for n ≥ 4096 (the embedding's 64 × 64 values).
  for (const auto& [sigma, z] : by_sigma) {
    const double n = static_cast<double>(z.size());
    double mean = 0, sq = 0;
    for (double v : z) mean += v;
    mean /= n;
    for (double v : z) sq += (v - mean) * (v - mean);
    const double sample_std = std::sqrt(sq / (n - 1));
    const double tolerance = 5 * 0.514 / std::sqrt(n);
    EXPECT_NEAR(sample_std, truncated_std(), tolerance) << "sigma " << sigma << ", n " << n;
    EXPECT_NEAR(mean, 0.0, 5 * 0.8796 / std::sqrt(n)) << "sigma " << sigma;
  }
  // The embedding's values themselves: std 0.8796 · 0.02, far from the matrices' 0.8796 / 8.
  double sq = 0;
  for (double v : embed) sq += v * v * 0.02 * 0.02;
  EXPECT_NEAR(std::sqrt(sq / static_cast<double>(embed.size())), 0.8796 * 0.02, 0.002);
}

TEST(WeightInit, EmbedInitStdAloneKeepsTheNormal) {
  ModelConfig c = testing::config_line("embed_init_std=0.5", {});
  const ParamLayout layout = param_layout_of(c);
  EXPECT_EQ(layout.find("embed.weight")->init, InitKind::normal);
  EXPECT_EQ(layout.find("embed.weight")->init_value, 0.5);
  EXPECT_EQ(layout.find("unembed.weight")->init_value, c.init_std);
}

TEST(WeightInit, FieldsInJsonOnlyWhenSet) {
  const nlohmann::json plain = to_json(ModelConfig{});
  EXPECT_FALSE(plain.contains("weight_init"));
  EXPECT_FALSE(plain.contains("embed_init_std"));
  EXPECT_EQ(model_config_from_json(plain).weight_init, WeightInit::normal);
  const ModelConfig c = reference_like();
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j.at("weight_init"), "truncated_fan_in");
  EXPECT_EQ(j.at("embed_init_std"), 0.02);
  const ModelConfig back = model_config_from_json(j);
  EXPECT_EQ(back.weight_init, WeightInit::truncated_fan_in);
  EXPECT_EQ(back.embed_init_std, 0.02);
}

TEST(WeightInit, WrongValuesAreRefused) {
  EXPECT_ANY_THROW(testing::config_line("weight_init=xavier", {}));
  ModelConfig c;
  c.embed_init_std = -0.1;
  EXPECT_ANY_THROW(validate(c));
  c.embed_init_std = 0.0;
  EXPECT_NO_THROW(validate(c));
}

}  // namespace
}  // namespace normlab
