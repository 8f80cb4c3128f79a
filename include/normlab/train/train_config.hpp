// How a model is trained on a task: steps, batch, lengths, schedule, AdamW, averaging,
// checkpoints. Stored in every run's run.json.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "normlab/io/value_ranges.hpp"
#include "normlab/optim/adamw.hpp"
#include "normlab/optim/averaging.hpp"
#include "normlab/optim/schedule.hpp"

namespace normlab {

class TomlSection;

// The allowed ranges of TrainConfig's fields, checked by the TOML and the JSON reader.
namespace train_limits {
inline constexpr int64_t kHuge = 1'000'000'000'000;  // far beyond any run, far from overflow
inline constexpr IntRange steps{1, kHuge};
inline constexpr IntRange batch{1, 1 << 20};
inline constexpr IntRange length{1, 1 << 24};
inline constexpr IntRange warmup{0, kHuge};
inline constexpr IntRange period{1, kHuge};  // checkpoint_every, log_every, averaging every
inline constexpr IntRange start{0, kHuge};   // averaging start, eval_every (0 = off)
inline constexpr IntRange threads{1, 256};
inline constexpr IntRange eval_batches{1, 1 << 20};
inline constexpr IntRange eval_length{0, 1 << 24};  // 0 = the longest training length
inline constexpr RealRange positive{0, kUnbounded, false, false};    // lr, eps, rho
inline constexpr RealRange nonnegative{0, kUnbounded, true, false};  // weight decay, clip,
                                                                     // kappa, eta, gamma
inline constexpr RealRange adam_beta{0, 1, true, false};
inline constexpr RealRange ratio{0, 1, true, true};            // min_lr_ratio
inline constexpr RealRange decay_fraction{0, 1, false, true};  // wsd
}  // namespace train_limits

// The logits the training loss is taken over (docs/training.md, "The loss over the classes"):
// the whole vocabulary, or the task's output classes alone (Task::class_block), the softmax
// over their logits and no gradient on any other.
enum class LossOver { vocabulary, classes };
std::string to_string(LossOver l);
LossOver parse_loss_over(const std::string& s);  // UsageError listing the choices

struct TrainConfig {
  int64_t steps = 2000;            // optimizer steps
  int64_t batch = 64;              // sequences per step
  int64_t min_len = 1;             // task lengths sampled uniformly from [min_len, max_len]
  int64_t max_len = 16;            //   (one length per batch, on the task's length grid)
  int64_t warmup = 100;            // linear warmup steps
  Decay decay = Decay::linear;     // decay after warmup
  double min_lr_ratio = 0.0;       // final lr / peak lr
  double decay_fraction = 0.2;     // wsd: share of the steps after warmup spent decaying
  AdamWConfig adam;                // lr, betas, eps, weight decay, clip
  AveragingConfig averaging;       // EMA / BEMA
  uint64_t seed = 0;               // model init and data seed
  int64_t checkpoint_every = 500;  // steps between resumable checkpoints
  int64_t log_every = 50;          // steps between metrics.jsonl lines
  int threads = 1;                 // threads inside the step
  // Periodic validation (docs/training.md): every eval_every steps, at step 0 and at the end,
  // the mean loss over eval_batches fixed validation batches (of `batch` sequences at task
  // length eval_length) is appended to metrics.jsonl as {"step", "val_loss"}.
  int64_t eval_every = 0;    // steps between validation losses; 0 = off
  int64_t eval_batches = 8;  // validation batches, the same ones every time
  int64_t eval_length = 0;   // their task length; 0 = the longest training length
  // Early stopping (docs/training.md, "Stopping at an accuracy"): training ends, as finished,
  // at the first validation after step 0 whose accuracy exceeds stop_accuracy (strictly).
  // Needs eval_every > 0; 0 = never.
  double stop_accuracy = 0.0;
  // The training loss, the validation loss and accuracy and the depth probe's loss over the
  // vocabulary or over the task's classes.
  LossOver loss_over = LossOver::vocabulary;
};

// The mean of the uniform training lengths [min_len, max_len], rounded up: the length that
// stands for a run's steps in cost estimates (dry runs, the ETA).
inline int64_t mean_training_length(const TrainConfig& c) {
  return (c.min_len + c.max_len + 1) / 2;
}

// run.json and the [train] table are written and read by walking visit_train_fields()
// (train_fields.hpp), which declares every field once. The periodic-validation keys are
// written only when eval_every > 0, stop_accuracy only when it is set, decay_fraction only
// for wsd, and they default when
// absent, so run.json files written before they existed still describe the same runs.
nlohmann::json to_json(const TrainConfig& c);
TrainConfig train_config_from_json(const nlohmann::json& j);  // InputError on bad fields

// Reads a [train] section strictly (unknown keys are errors), starting from `base`.
// Keys: steps, batch, lengths = [min, max], warmup, schedule, min_lr_ratio, decay_fraction
// (wsd only), lr, beta1,
// beta2, eps, weight_decay, clip, checkpoint_every, log_every, threads, eval_every,
// eval_batches, eval_length, stop_accuracy, loss_over ("vocabulary", "classes"), and a sub-table
// [train.averaging] with every, start, kappa, eta, rho, gamma.
TrainConfig read_train_config(TomlSection& section, TrainConfig base = {});

}  // namespace normlab
