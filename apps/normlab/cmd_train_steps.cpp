// `normlab train-steps`: N AdamW steps on random tokens (next-token targets), from one
// checkpoint to another. A smoke test of the whole training path and of determinism.
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "normlab/base/batch.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/core/threads.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/optim/adamw.hpp"
#include "normlab/train/train_config.hpp"
#include "normlab/train/train_step.hpp"
#include "validators.hpp"

namespace normlab::cli {

void add_train_steps_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train-steps", "Run N AdamW steps on random tokens");
  auto checkpoint = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto steps = std::make_shared<int64_t>(10);
  auto batch = std::make_shared<int64_t>(8);
  auto len = std::make_shared<int64_t>(16);
  auto seed = std::make_shared<uint64_t>(0);
  auto threads = std::make_shared<int>(1);
  auto adam = std::make_shared<AdamWConfig>();
  cmd->add_option("--checkpoint", *checkpoint, "Checkpoint directory to start from")->required();
  cmd->add_option("--out", *out, "Checkpoint directory to write")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--steps", *steps, "Optimizer steps")
      ->check(integer_in(0, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--batch", *batch, "Sequences per step")
      ->check(integer_in(1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--seq-len", *len, "Sequence length")
      ->check(integer_in(2, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--seed", *seed, "Seed of the random tokens")
      ->check(seed_value())
      ->capture_default_str();
  cmd->add_option("--threads", *threads, "Threads")
      ->check(integer_in(train_limits::threads))
      ->capture_default_str();
  cmd->add_option("--lr", adam->lr, "Learning rate")
      ->check(real_in(train_limits::positive))
      ->capture_default_str();
  cmd->add_option("--weight-decay", adam->weight_decay, "Decoupled weight decay")
      ->check(real_in(train_limits::nonnegative))
      ->capture_default_str();
  cmd->add_option("--clip", adam->clip_norm, "Global gradient-norm clip (0: off)")
      ->check(real_in(train_limits::nonnegative))
      ->capture_default_str();
  cmd->callback([=] {
    set_num_threads(*threads);
    auto model = load_checkpoint(*checkpoint);
    AdamW optimizer(model->layout(), *adam, model->scheme().weight_decay);
    Rng rng(*seed);
    std::vector<float> dlogits;
    double loss = 0;
    for (int64_t s = 0; s < *steps; ++s) {
      const Batch b = random_next_token_batch(model->config().vocab, *batch, *len, rng);
      loss = train_step(*model, optimizer, b, adam->lr, dlogits).loss;
      if (!std::isfinite(loss)) {
        throw InputError(fmt::format("loss became {} at step {}; nothing written", loss, s + 1));
      }
    }
    save_checkpoint(*out, *model);
    std::printf("%lld steps, last loss %.6f; wrote %s/%s\n", static_cast<long long>(*steps), loss,
                out->c_str(), kModelFile);
  });
}

}  // namespace normlab::cli
