// The fields of TrainConfig, declared once (as model_fields.hpp does for ModelConfig).
//
// visit_train_fields() calls the visitor once per field with its TrainFieldInfo, a reference
// to its value and its allowed range. The JSON writer and reader (run.json) and the TOML
// reader ([train], [train.averaging]) walk it. A visitor provides:
//   void operator()(const TrainFieldInfo&, int64_t& value, IntRange range);
//   void operator()(const TrainFieldInfo&, int& value, IntRange range);
//   void operator()(const TrainFieldInfo&, double& value, RealRange range);
//   void operator()(const TrainFieldInfo&, uint64_t& value);      // the seed
//   void operator()(const TrainFieldInfo&, Decay& value);         // the schedule, a word
//   void operator()(const TrainFieldInfo&, LossOver& value);      // loss_over, a word
// (const-qualified values when it walks a const TrainConfig).
#pragma once

#include "normlab/train/train_config.hpp"

namespace normlab {

struct TrainFieldInfo {
  const char* name;               // the key in run.json and in the TOML table
  const char* section = nullptr;  // "averaging": under run.json's "averaging" object and the
                                  // [train.averaging] table; null: at the top
  bool in_toml = true;            // false: not a TOML key (seed: the experiment's seeds;
                                  // min_len, max_len: TOML's lengths = [min, max])
  // Written to run.json: keys added later are written only when they matter, so run.json
  // files (and result hashes) of runs that do not use them stay as they were; absent, they
  // read as their defaults.
  bool written = true;
  bool optional_json = false;
};

// Config is TrainConfig or const TrainConfig.
template <typename Config, typename Visitor>
void visit_train_fields(Config& c, Visitor&& v) {
  namespace L = train_limits;
  v(TrainFieldInfo{.name = "steps"}, c.steps, L::steps);
  v(TrainFieldInfo{.name = "batch"}, c.batch, L::batch);
  v(TrainFieldInfo{.name = "min_len", .in_toml = false}, c.min_len, L::length);
  v(TrainFieldInfo{.name = "max_len", .in_toml = false}, c.max_len, L::length);
  v(TrainFieldInfo{.name = "warmup"}, c.warmup, L::warmup);
  v(TrainFieldInfo{.name = "schedule"}, c.decay);
  v(TrainFieldInfo{.name = "min_lr_ratio"}, c.min_lr_ratio, L::ratio);
  v(
      TrainFieldInfo{
          .name = "decay_fraction", .written = c.decay == Decay::wsd, .optional_json = true},
      c.decay_fraction, L::decay_fraction);
  v(TrainFieldInfo{.name = "lr"}, c.adam.lr, L::positive);
  v(TrainFieldInfo{.name = "beta1"}, c.adam.beta1, L::adam_beta);
  v(TrainFieldInfo{.name = "beta2"}, c.adam.beta2, L::adam_beta);
  v(TrainFieldInfo{.name = "eps"}, c.adam.eps, L::positive);
  v(TrainFieldInfo{.name = "weight_decay"}, c.adam.weight_decay, L::nonnegative);
  v(TrainFieldInfo{.name = "clip"}, c.adam.clip_norm, L::nonnegative);
  v(TrainFieldInfo{.name = "every", .section = "averaging"}, c.averaging.every, L::period);
  v(TrainFieldInfo{.name = "start", .section = "averaging"}, c.averaging.start, L::start);
  v(TrainFieldInfo{.name = "kappa", .section = "averaging"}, c.averaging.kappa, L::nonnegative);
  v(TrainFieldInfo{.name = "eta", .section = "averaging"}, c.averaging.eta, L::nonnegative);
  v(TrainFieldInfo{.name = "rho", .section = "averaging"}, c.averaging.rho, L::positive);
  v(TrainFieldInfo{.name = "gamma", .section = "averaging"}, c.averaging.gamma, L::nonnegative);
  v(TrainFieldInfo{.name = "seed", .in_toml = false}, c.seed);
  v(TrainFieldInfo{.name = "checkpoint_every"}, c.checkpoint_every, L::period);
  v(TrainFieldInfo{.name = "log_every"}, c.log_every, L::period);
  v(TrainFieldInfo{.name = "threads"}, c.threads, L::threads);
  const bool validating = c.eval_every > 0;
  v(TrainFieldInfo{.name = "eval_every", .written = validating, .optional_json = true},
    c.eval_every, L::start);
  v(TrainFieldInfo{.name = "eval_batches", .written = validating, .optional_json = true},
    c.eval_batches, L::eval_batches);
  v(TrainFieldInfo{.name = "eval_length", .written = validating, .optional_json = true},
    c.eval_length, L::eval_length);
  v(TrainFieldInfo{.name = "stop_accuracy", .written = c.stop_accuracy > 0, .optional_json = true},
    c.stop_accuracy, L::ratio);
  v(TrainFieldInfo{.name = "loss_over",
                   .written = c.loss_over != LossOver::vocabulary,
                   .optional_json = true},
    c.loss_over);
}

}  // namespace normlab
