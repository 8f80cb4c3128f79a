// The MLP and readout biases (mlp_bias, readout_bias; model_config.hpp, docs/schemes.md
// "Biases"):
//   - off (the default), the layout (names, shapes) and the initial values are those the
//     model had before the fields existed (a checksum taken from a checkpoint of the earlier
//     build), and the config's JSON has neither key;
//   - on, the layout is the bias-free one with the bias tensors added after their weights
//     (constant 0, not decayed), every other tensor drawn to the same values, and the initial
//     model computes the bias-free model's logits (training and inference passes) and, for
//     every other tensor, its gradients, bit for bit;
//   - the biases act: moved off zero, the logits change by the readout bias exactly;
//   - the fields' validation and their JSON round trip.
// Their gradients are checked by finite differences in model_gradcheck_test.cpp and against
// PyTorch in tests/twin/twin_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/kernels/cross_entropy.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/model/model.hpp"
#include "support/config_line.hpp"

namespace normlab {
namespace {

bool is_bias(const std::string& name) {
  return name.ends_with(".up.bias") || name.ends_with(".down.bias") || name == "unembed.bias";
}

// Delétang et al.'s encoder, small: post-LN, relu, bidirectional, ALiBi, the reference's init.
ModelConfig encoder(const std::string& extra = "") {
  ModelConfig c = testing::config_line(
      "scheme=post norm=layernorm activation=relu causal=false pos=alibi "
      "weight_init=truncated_fan_in embed_init_std=0.02 scaled_init=false embed_scale=4 " +
          extra,
      {});
  c.vocab = 7;
  c.width = 16;
  c.heads = 2;
  c.layers = 2;
  c.mlp_mult = 4;
  return c;
}

// FNV-1a over each tensor's "name:d0xd1;" in layout order, then the parameters' bytes.
uint64_t layout_and_values_checksum(const Model<float>& m) {
  uint64_t h = 1469598103934665603ULL;
  auto add = [&h](const void* data, size_t n) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h ^= bytes[i];
      h *= 1099511628211ULL;
    }
  };
  for (const TensorSpec& t : m.layout().tensors()) {
    std::string text = t.name + ":";
    for (size_t k = 0; k < t.shape.size(); ++k) {
      text += (k > 0 ? "x" : "") + std::to_string(t.shape[k]);
    }
    text += ";";
    add(text.data(), text.size());
  }
  add(m.params().data(), m.params().size() * sizeof(float));
  return h;
}

// The values are those of `normlab init` checkpoints written by the build before the fields
// existed (commit 346baa1; the same checksum computed over their safetensors tensors in
// layout order): with the fields off, nothing of a model changed.
TEST(Biases, OffKeepsTheLayoutAndValuesOfBefore) {
  struct Golden {
    const char* line;
    uint64_t checksum;
  };
  for (const Golden& g :
       {Golden{"", 0x78a48cff72429b36ULL},
        Golden{"scheme=ngpt norm=l2 weight_init=normal", 0x05e532a110eddbdbULL}}) {
    const ModelConfig c = encoder(g.line);
    Model<float> m(c);
    m.init(5);
    EXPECT_EQ(layout_and_values_checksum(m), g.checksum)
        << g.line << ": 0x" << std::hex << layout_and_values_checksum(m);
    for (const TensorSpec& t : m.layout().tensors()) EXPECT_FALSE(is_bias(t.name)) << t.name;
    const nlohmann::json j = to_json(c);
    EXPECT_FALSE(j.contains("mlp_bias"));
    EXPECT_FALSE(j.contains("readout_bias"));
  }
}

// The layout with biases is the bias-free one plus the biases, each right after its weight.
TEST(Biases, OnAddsOnlyTheBiasesAfterTheirWeights) {
  for (const char* line : {"", "tied=true", "scheme=ngpt norm=l2 weight_init=normal",
                           "scheme=hyper_connections pos=rope"}) {
    const ParamLayout off = param_layout_of(encoder(line));
    const ParamLayout on =
        param_layout_of(encoder(std::string(line) + " mlp_bias=true readout_bias=true"));
    std::vector<const TensorSpec*> kept;
    int biases = 0;
    for (size_t k = 0; k < on.tensors().size(); ++k) {
      const TensorSpec& t = on.tensors()[k];
      if (!is_bias(t.name)) {
        kept.push_back(&t);
        continue;
      }
      ++biases;
      EXPECT_EQ(t.init, InitKind::constant) << t.name;
      EXPECT_EQ(t.init_value, 0.0) << t.name;
      EXPECT_FALSE(t.decay) << t.name;
      EXPECT_EQ(t.unit_norm, UnitNormAxis::none) << t.name;
      ASSERT_GT(k, 0u);
      const std::string weight = t.name == "unembed.bias"
                                     ? (on.find("unembed.weight") ? "unembed.weight" : "")
                                     : t.name.substr(0, t.name.size() - 4) + "weight";
      if (!weight.empty()) {
        EXPECT_EQ(on.tensors()[k - 1].name, weight) << line;
      }
      const int64_t expected = t.name == "unembed.bias"       ? 7
                               : t.name.ends_with(".up.bias") ? 64
                                                              : 16;
      EXPECT_EQ(t.shape, std::vector<int64_t>{expected}) << t.name;
    }
    EXPECT_EQ(biases, 2 * 2 + 1) << line;  // up and down per layer, the readout
    ASSERT_EQ(kept.size(), off.tensors().size()) << line;
    for (size_t k = 0; k < kept.size(); ++k) {
      const TensorSpec& a = off.tensors()[k];
      const TensorSpec& b = *kept[k];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.shape, b.shape) << a.name;
      EXPECT_EQ(a.init, b.init) << a.name;
      EXPECT_EQ(a.init_value, b.init_value) << a.name;
      EXPECT_EQ(a.decay, b.decay) << a.name;
    }
  }
}

// One tensor's values in model m.
std::vector<float> values_of(const Model<float>& m, const std::string& name,
                             const std::vector<float>& buffer) {
  const TensorSpec* t = m.layout().find(name);
  return {buffer.begin() + t->offset, buffer.begin() + t->offset + t->size};
}

// At init the biases are 0 and every other tensor is drawn as without them: the same logits,
// the same gradients of the other tensors, bit for bit, under dropout too.
TEST(Biases, AtInitTheModelComputesWhatTheBiasFreeModelDoes) {
  for (const char* line : {"", "dropout=0.1", "tied=true final_norm=on",
                           "scheme=ngpt norm=l2 weight_init=normal", "scheme=pre pos=rope"}) {
    Model<float> off(encoder(line));
    Model<float> on(encoder(std::string(line) + " mlp_bias=true readout_bias=true"));
    off.init(9);
    on.init(9);
    for (const TensorSpec& t : off.layout().tensors()) {
      EXPECT_EQ(values_of(off, t.name, off.params()), values_of(on, t.name, on.params()))
          << line << ": " << t.name;
    }
    const int64_t B = 3, T = 6, N = B * T, V = 7;
    Rng rng(4);
    std::vector<int32_t> tokens(N);
    for (int32_t& t : tokens) t = static_cast<int32_t>(rng.below(V));
    std::vector<float> logits[2], grads[2], inferred[2];
    Model<float>* models[2] = {&off, &on};
    for (int k = 0; k < 2; ++k) {
      Model<float>& m = *models[k];
      m.set_dropout_key(m.config().dropout > 0 ? std::optional<uint64_t>(17) : std::nullopt);
      const float* z = m.forward(tokens.data(), B, T);
      logits[k].assign(z, z + N * V);
      std::vector<int32_t> target_tokens(N);
      std::vector<int64_t> offsets(N + 1);
      std::vector<float> probs(N, 1.0f), weight(N, 1.0f), dlogits(N * V);
      for (int64_t n = 0; n < N; ++n) {
        target_tokens[n] = static_cast<int32_t>((n * 5 + 1) % V);
        offsets[n + 1] = n + 1;
      }
      cross_entropy(
          logits[k].data(),
          SparseTargets<float>{nullptr, offsets.data(), target_tokens.data(), probs.data()},
          weight.data(), dlogits.data(), N, static_cast<int>(V));
      m.zero_grads();
      m.backward(dlogits.data());
      grads[k] = m.grads();
      m.set_dropout_key(std::nullopt);
      const std::vector<int64_t> rows = {0, 4, 11, 17};
      const float* r = m.forward_rows(tokens.data(), B, T, 1, rows);
      inferred[k].assign(r, r + rows.size() * V);
    }
    EXPECT_EQ(inferred[0], inferred[1]) << line;
    EXPECT_EQ(std::memcmp(logits[0].data(), logits[1].data(), N * V * sizeof(float)), 0) << line;
    for (const TensorSpec& t : off.layout().tensors()) {
      EXPECT_EQ(values_of(off, t.name, grads[0]), values_of(on, t.name, grads[1]))
          << line << ": " << t.name;
    }
    // The biases' own gradients are not zero: they learn.
    for (const char* name : {"layers.0.mlp.up.bias", "layers.1.mlp.down.bias", "unembed.bias"}) {
      double sum = 0;
      for (float g : values_of(on, name, grads[1])) sum += std::abs(g);
      EXPECT_GT(sum, 0.0) << line << ": " << name;
    }
  }
}

// The readout bias adds to every row of logits, in both passes.
TEST(Biases, ReadoutBiasAddsToTheLogits) {
  Model<float> m(encoder("readout_bias=true"));
  m.init(3);
  const int64_t B = 2, T = 5, N = B * T, V = 7;
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 0, 1, 2, 3};
  const std::vector<int64_t> rows = {3, 7};
  const float* z = m.forward(tokens.data(), B, T);
  const std::vector<float> before(z, z + N * V);
  z = m.forward_rows(tokens.data(), B, T, 1, rows);
  const std::vector<float> inferred_before(z, z + rows.size() * V);
  const TensorSpec* bias = m.layout().find("unembed.bias");
  auto b = [](int64_t v) { return 0.25f * static_cast<float>(v + 1); };
  for (int64_t v = 0; v < V; ++v) m.params()[bias->offset + v] = b(v);
  z = m.forward(tokens.data(), B, T);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t v = 0; v < V; ++v) EXPECT_EQ(z[n * V + v], before[n * V + v] + b(v));
  }
  z = m.forward_rows(tokens.data(), B, T, 1, rows);
  for (size_t q = 0; q < rows.size(); ++q) {
    for (int64_t v = 0; v < V; ++v) EXPECT_EQ(z[q * V + v], inferred_before[q * V + v] + b(v));
  }
}

TEST(Biases, ConfigFields) {
  ModelConfig c = encoder("mlp_bias=true readout_bias=true");
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j.at("mlp_bias"), true);
  EXPECT_EQ(j.at("readout_bias"), true);
  const ModelConfig back = model_config_from_json(j);
  EXPECT_TRUE(back.mlp_bias);
  EXPECT_TRUE(back.readout_bias);
  // A checkpoint written before the fields existed reads as bias-free.
  nlohmann::json old = to_json(encoder());
  const ModelConfig read = model_config_from_json(old);
  EXPECT_FALSE(read.mlp_bias);
  EXPECT_FALSE(read.readout_bias);
  // An MLP bias needs an MLP.
  c = encoder("mlp=false mlp_bias=true");
  try {
    validate(c);
    FAIL() << "mlp_bias without an MLP was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("mlp_bias needs an MLP sublayer"), std::string::npos)
        << e.what();
  }
  // A readout bias needs none.
  EXPECT_NO_THROW(validate(encoder("mlp=false readout_bias=true")));
}

}  // namespace
}  // namespace normlab
