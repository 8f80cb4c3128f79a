// The training step's cross-entropy fused into the readout (Model::forward_with_readout_loss,
// src/train/train_step.cpp) against the unfused path (forward, the loss over all the logits,
// backward), which a gradient hook selects: the same loss and every gradient the same bits,
// tied and untied, with a readout bias, on 1 and 2 threads, and no (R, V) logits in the
// workspace. V = 300 and D = 64 take the products (not the small kernels); 7 × 100 rows, 600
// of them scored (3 shards, the last partial; two weight lanes).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "normlab/base/batch.hpp"
#include "normlab/model/activation_hooks.hpp"
#include "normlab/model/model.hpp"
#include "normlab/train/train_step.hpp"
#include "support/small_model.hpp"

namespace normlab {
namespace {

// A gradient hook at no site: it changes nothing but turns the fusion off.
struct NoSites : ActivationHooks<float> {
  bool wants(const std::string&) override { return false; }
  bool visit(const std::string&, float*, const std::vector<int64_t>&) override { return false; }
};

TEST(FusedReadout, GivesTheUnfusedLossAndGradientsBitForBit) {
  const int64_t B = 7, T = 100;
  const int V = 300;
  Batch batch;
  batch.resize(B, T, V);
  for (int64_t n = 0; n < B * T; ++n) {
    batch.tokens[n] = static_cast<int32_t>((n * 37 + 11) % V);
    if (n % 7 != 3) batch.set_one_hot(n, static_cast<int32_t>((n * 53 + 5) % V));
  }
  const int saved = num_threads();
  for (const bool tied : {false, true}) {
    ModelConfig c = testing::small_model_config(Scheme::pre);
    c.vocab = V;
    c.width = 64;
    c.heads = 4;
    c.init_std = 0.05;
    c.tied = tied;
    c.readout_bias = true;
    Model<float> model(c);
    model.init(3);
    ASSERT_TRUE(model.readout_loss_fuses());
    for (const int threads : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << "tied " << tied << ", " << threads << " threads");
      set_num_threads(threads);
      std::vector<float> dlogits;
      NoSites hooks;
      model.set_gradient_hooks(&hooks);
      const double unfused = loss_and_grads(model, batch, dlogits);
      const std::vector<float> grads = model.grads();
      const int64_t unfused_values = model.training_workspace_values();
      model.set_gradient_hooks(nullptr);
      const double fused = loss_and_grads(model, batch, dlogits);
      // The fused pass keeps no (R, V) logits: 600 scored rows × V fewer values.
      EXPECT_EQ(unfused_values - model.training_workspace_values(), 600 * V);
      EXPECT_EQ(std::memcmp(&fused, &unfused, sizeof(double)), 0) << fused << " " << unfused;
      ASSERT_EQ(model.grads().size(), grads.size());
      EXPECT_EQ(std::memcmp(model.grads().data(), grads.data(), grads.size() * sizeof(float)), 0);
    }
  }
  set_num_threads(saved);
}

}  // namespace
}  // namespace normlab
