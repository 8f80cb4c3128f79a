// Training one model on one task, resumably.
//
// A run lives in a directory (docs/training.md):
//   RUN/run.json        the model, task and training configs, and the run's status
//   RUN/metrics.jsonl   one JSON object per logged step (always written), and one
//                       {"step", "val_loss"} per periodic validation ([train] eval_every)
//   RUN/checkpoint/     the latest resumable state: model, optimizer moments, EMA/BEMA
//                       state, data RNG, step (replaced atomically: a new directory is
//                       written, then renamed into place)
//   RUN/final/          model.safetensors, ema.safetensors, bema.safetensors at the end
// A resumed run (same directory) reaches final weights bit-identical to an uninterrupted one.
// A NaN or Inf loss stops the run with status "diverged"; the last good checkpoint stays.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "normlab/model/model.hpp"
#include "normlab/model/model_config.hpp"
#include "normlab/train/train_config.hpp"
#include "normlab/train/train_step.hpp"

namespace normlab {

struct RunSpec {
  std::string label;    // e.g. "post_attn/layernorm seed 2"
  ModelConfig model;    // vocab must equal the task's
  nlohmann::json task;  // {"name": ..., params}
  TrainConfig train;
  nlohmann::json eval;  // optional: {"lengths", "samples", "seed", "max_rows", "weights"}
};

enum class RunStatus { pending, running, interrupted, finished, diverged };
std::string to_string(RunStatus s);

struct RunOutcome {
  RunStatus status = RunStatus::pending;
  int64_t steps = 0;            // optimizer steps completed
  double last_loss = 0;         // loss of the last logged step
  double seconds = 0;           // training time (this process)
  std::string message;          // why it stopped: diverged, or finished early (stop_accuracy)
  bool trained_before = false;  // finished by an earlier process; --resume trained nothing
};

// Writes RUN/run.json for a new run (status pending). Refuses an existing run directory
// whose run.json describes a different run.
void prepare_run(const std::filesystem::path& run_dir, const RunSpec& spec);
RunSpec read_run_spec(const std::filesystem::path& run_dir);
RunStatus read_run_status(const std::filesystem::path& run_dir);

// What a training step reports to TrainHooks::on_step.
struct StepReport {
  int64_t step = 0;       // optimizer steps completed
  int64_t steps = 0;      // the run's total
  double loss = 0;        // this step's training loss (before its update)
  double lr = 0;          // its learning rate
  double grad_norm = 0;   // its gradient norm before clipping
  int64_t length = 0;     // its task length
  double val_loss = NAN;  // the latest validation loss (eval_every), NaN without one
};

struct TrainHooks {
  // Called after every `on_step_every`-th step and after the last, with the model as it is
  // then; returning false stops the run there as an interrupt does (state saved, status
  // interrupted, resumable with the same bits). Reading the model changes nothing.
  std::function<bool(const StepReport&, const Model<float>&)> on_step;
  int64_t on_step_every = 0;
  // Progress line on a terminal: called at most a few times per second.
  bool progress = false;
  // Testing aid: the process sends itself SIGKILL after this step (0: never).
  int64_t kill_at_step = 0;
  // A checkpoint also once this many seconds of training have passed since the last one (or
  // since this process started the run), whatever checkpoint_every says, so a kill loses at
  // most this much of a slow run; 0: after every step. The saved state resumes with the same
  // bits whatever step it is of, so this changes no result.
  double checkpoint_seconds = 600;
  // Stop at the end of the step during which SIGINT or SIGTERM arrived (catch_interrupts(),
  // base/interrupts.hpp): the state is saved as a checkpoint and the run marked interrupted,
  // so that resuming continues from that step with the same bits.
  bool stop_on_interrupt = false;
  // Testing aid: the process sends itself SIGINT after this step (0: never).
  int64_t interrupt_at_step = 0;
  // Another process training this run: wait for it to stop (true), or fail at once (false).
  bool wait_for_run_lock = false;
  // Data of the caller's in place of the run's task (Python's Trainer, docs/python.md): the
  // batch of step `step` (from 1), or nullopt to stop the run before it (state saved, status
  // interrupted). The task still validates (eval_every) and evaluates the final weights.
  std::function<std::optional<Batch>(int64_t step)> next_batch;
  // A loss of the caller's in place of the cross-entropy (train_step.hpp).
  CustomLoss loss;
};

// Settings with a "model" and a "train" object (a run.json, a variant of an experiment.json) as
// this version reads them: a field written before it existed reads as its default
// (optional_json, as checkpoints do), so the same settings written by an older normlab compare
// equal. Settings that do not read are returned as written.
nlohmann::json settings_as_read(nlohmann::json settings);

// The step of the run's last checkpoint, 0 without one.
int64_t checkpoint_step(const std::filesystem::path& run_dir);

// Trains (or, with a checkpoint present and resume = true, continues) the run in run_dir.
RunOutcome train_run(const std::filesystem::path& run_dir, bool resume, const TrainHooks& hooks);

// Evaluates RUN/final with the run's "eval" settings, for each listed weights, writing
// RUN/eval_WEIGHTS.csv and .json. Does nothing for a run without "eval".
void evaluate_run(const std::filesystem::path& run_dir, bool progress);

// Files in RUN/final for each choice of --weights.
std::filesystem::path weights_file(const std::filesystem::path& final_dir,
                                   const std::string& weights);

}  // namespace normlab
