// `normlab grads`: loss, logits and every parameter gradient on a seeded random batch,
// written as safetensors, for cross-checks against the PyTorch twin (bench/twin.py --check).
//
// Tensors written: "tokens" (B, T) as floats, "target" (B, T, V), "weight" (B, T),
// "logits" (B, T, V), "loss" (1), and "grad.NAME" for every parameter NAME.
#include <cstdio>

#include "commands.hpp"
#include "normlab/batch.hpp"
#include "normlab/checkpoint.hpp"
#include "normlab/model.hpp"
#include "normlab/safetensors.hpp"
#include "normlab/train_step.hpp"
#include "validators.hpp"

namespace normlab::cli {

void add_grads_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "grads", "Write loss, logits and parameter gradients on a random batch (cross-checks)");
  auto checkpoint = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto batch = std::make_shared<int64_t>(2);
  auto len = std::make_shared<int64_t>(8);
  auto seed = std::make_shared<uint64_t>(0);
  cmd->add_option("--checkpoint", *checkpoint, "Checkpoint directory")->required();
  cmd->add_option("--out", *out, "Output .safetensors file")->required()->check(non_empty_path());
  cmd->add_option("--batch", *batch, "Sequences B")
      ->check(integer_in(1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--seq-len", *len, "Sequence length T")
      ->check(integer_in(2, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--seed", *seed, "Seed of the random batch")
      ->check(seed_value())
      ->capture_default_str();
  cmd->callback([=] {
    auto model = load_checkpoint(*checkpoint);
    const int V = model->config().vocab;
    Rng rng(*seed);
    const Batch b = random_next_token_batch(V, *batch, *len, rng);
    std::vector<float> dlogits;
    const double loss = loss_and_grads(*model, b, dlogits);
    const float* logits = model->forward(b.tokens.data(), b.batch, b.len);  // same values
    const int64_t N = b.batch * b.len;
    SafetensorsFile file;
    file.tensors.push_back(
        {"tokens", {b.batch, b.len}, std::vector<float>(b.tokens.begin(), b.tokens.end())});
    file.tensors.push_back({"target", {b.batch, b.len, V}, b.dense_target()});
    file.tensors.push_back({"weight", {b.batch, b.len}, b.weight});
    file.tensors.push_back(
        {"logits", {b.batch, b.len, V}, std::vector<float>(logits, logits + N * V)});
    file.tensors.push_back({"loss", {1}, {static_cast<float>(loss)}});
    for (const TensorSpec& t : model->layout().tensors()) {
      file.tensors.push_back({"grad." + t.name, t.shape,
                              std::vector<float>(model->grads().begin() + t.offset,
                                                 model->grads().begin() + t.offset + t.size)});
    }
    write_safetensors(*out, file);
    std::printf("loss %.6f; wrote %s\n", loss, out->c_str());
  });
}

}  // namespace normlab::cli
