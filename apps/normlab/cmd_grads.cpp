// `normlab grads`: loss, logits and every parameter gradient on a seeded random batch,
// written as safetensors, for cross-checks against the PyTorch twin (bench/twin.py --check).
//
// Tensors written: "tokens" (B, T) as floats, "target" (B, T, V), "weight" (B, T),
// "logits" (B, T, V), "loss" (1), and "grad.NAME" for every parameter NAME. With --double the
// model runs as Model<double> from the same float32 checkpoint and every tensor is float64
// (dtype F64): the exact-equivalence check of docs/twin.md.
#include <cstdio>

#include "commands.hpp"
#include "normlab/base/batch.hpp"
#include "normlab/io/safetensors.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/train/train_step.hpp"
#include "validators.hpp"

namespace normlab::cli {
namespace {

// The batch, and the model's logits, loss and gradients on it, as tensors of type T.
template <typename T>
std::vector<SafeTensor64> grads_tensors(Model<T>& model, const Batch& b, double& loss) {
  const int V = model.config().vocab;
  std::vector<T> dlogits;
  loss = loss_and_grads(model, b, dlogits);
  const T* logits = model.forward(b.tokens.data(), b.batch, b.len);  // same values
  const int64_t N = b.batch * b.len;
  const std::vector<float> target = b.dense_target();
  std::vector<SafeTensor64> out;
  out.push_back(
      {"tokens", {b.batch, b.len}, std::vector<double>(b.tokens.begin(), b.tokens.end())});
  out.push_back({"target", {b.batch, b.len, V}, std::vector<double>(target.begin(), target.end())});
  out.push_back(
      {"weight", {b.batch, b.len}, std::vector<double>(b.weight.begin(), b.weight.end())});
  out.push_back({"logits", {b.batch, b.len, V}, std::vector<double>(logits, logits + N * V)});
  out.push_back({"loss", {1}, {static_cast<double>(static_cast<T>(loss))}});
  for (const TensorSpec& t : model.layout().tensors()) {
    const auto begin = model.grads().begin() + t.offset;
    out.push_back({"grad." + t.name, t.shape, std::vector<double>(begin, begin + t.size)});
  }
  return out;
}

// float32 tensors of the values (all float32 values, written as they were computed).
SafetensorsFile narrowed(const std::vector<SafeTensor64>& tensors) {
  SafetensorsFile file;
  for (const SafeTensor64& t : tensors) {
    file.tensors.push_back({t.name, t.shape, std::vector<float>(t.data.begin(), t.data.end())});
  }
  return file;
}

}  // namespace

void add_grads_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "grads", "Write loss, logits and parameter gradients on a random batch (cross-checks)");
  auto checkpoint = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto batch = std::make_shared<int64_t>(2);
  auto len = std::make_shared<int64_t>(8);
  auto seed = std::make_shared<uint64_t>(0);
  auto as_double = std::make_shared<bool>(false);
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
  cmd->add_flag("--double", *as_double,
                "Compute in float64 (the float32 checkpoint widened) and write F64 tensors");
  cmd->callback([=] {
    double loss = 0;
    if (*as_double) {
      auto model = load_checkpoint_double(*checkpoint);
      Rng rng(*seed);
      const Batch b = random_next_token_batch(model->config().vocab, *batch, *len, rng);
      write_safetensors_f64(*out, grads_tensors(*model, b, loss));
    } else {
      auto model = load_checkpoint(*checkpoint);
      Rng rng(*seed);
      const Batch b = random_next_token_batch(model->config().vocab, *batch, *len, rng);
      write_safetensors(*out, narrowed(grads_tensors(*model, b, loss)));
    }
    std::printf("loss %.6f; wrote %s\n", loss, out->c_str());
  });
}

}  // namespace normlab::cli
