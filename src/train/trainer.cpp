#include "normlab/train/trainer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "core/finite.hpp"
#include "core/kernels/dropout.hpp"
#include "core/parallel.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/base/interrupts.hpp"
#include "normlab/eval/eval_progress.hpp"
#include "normlab/eval/evaluator.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/json_file.hpp"
#include "normlab/io/progress.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/optim/adamw.hpp"
#include "normlab/optim/averaging.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/train_step.hpp"
#include "train/batch_targets.hpp"
#include "train/class_loss.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

constexpr const char* kRunFile = "run.json";
constexpr const char* kMetricsFile = "metrics.jsonl";

// What a run that diverges after `step` completed steps leaves: its last checkpoint, of step
// `last` (never of non-finite weights), or nothing when none was written yet (last = 0). When
// the loss went non-finite, a checkpoint of `step` itself holds the very weights that gave that
// loss, so it is named as such, not as a good state.
std::string what_divergence_keeps(int64_t step, int64_t last, bool loss_went_non_finite) {
  if (last == 0) return "no checkpoint was kept (none had been written yet)";
  if (loss_went_non_finite && last == step) {
    return fmt::format(
        "the checkpoint of step {} is kept, but it holds the weights that gave "
        "this loss (for inspection, not a good state)",
        last);
  }
  return fmt::format("the checkpoint of step {}, the last good state, is kept", last);
}

void write_json(const fs::path& path, const nlohmann::json& j) {
  write_file_atomic(path, j.dump(2) + "\n");
}

void set_status(const fs::path& run_dir, RunStatus status, const std::string& message = "") {
  nlohmann::json j = parse_json_file(run_dir / kRunFile);
  j["status"] = to_string(status);
  if (!message.empty()) j["message"] = message;
  write_json(run_dir / kRunFile, j);
}

// Everything a resumed run needs, beside the model and optimizer tensors.
struct TrainState {
  int64_t step = 0;
  uint64_t rng[4] = {0, 0, 0, 0};
  bool averaging_started = false;
};

// The data seed differs from the init seed so that changing one never aliases the other.
uint64_t data_seed(uint64_t seed) {
  return seed * 0x9e3779b97f4a7c15ULL + 0x5eed;
}

fs::path checkpoint_dir(const fs::path& run) {
  return run / "checkpoint";
}

// Writes the state into RUN/checkpoint.new, then swaps it into place.
void save_state(const fs::path& run, const Model<float>& model, AdamW& adam, WeightAverager& avg,
                const TrainState& st) {
  const fs::path tmp = run / "checkpoint.new";
  const fs::path cur = checkpoint_dir(run);
  const fs::path old = run / "checkpoint.old";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp);
  const ModelConfig& c = model.config();
  save_param_file(tmp / kModelFile, c, model.layout(), model.params());
  save_param_file(tmp / "adam_m.safetensors", c, model.layout(), adam.first_moment());
  save_param_file(tmp / "adam_v.safetensors", c, model.layout(), adam.second_moment());
  if (st.averaging_started) {
    save_param_file(tmp / "theta0.safetensors", c, model.layout(), avg.theta0());
    save_param_file(tmp / "ema.safetensors", c, model.layout(), avg.ema());
    save_param_file(tmp / "bema.safetensors", c, model.layout(), avg.bema());
  }
  nlohmann::json j{{"step", st.step},
                   {"adam_steps", adam.steps()},
                   {"averaging_started", st.averaging_started},
                   {"rng",
                    {std::to_string(st.rng[0]), std::to_string(st.rng[1]),
                     std::to_string(st.rng[2]), std::to_string(st.rng[3])}}};
  write_json(tmp / "state.json", j);
  fs::remove_all(old, ec);
  if (fs::exists(cur)) fs::rename(cur, old);
  fs::rename(tmp, cur);
  fs::remove_all(old, ec);
}

// The state file of the run's latest checkpoint ("" without one).
fs::path state_file(const fs::path& run) {
  for (const fs::path& dir : {checkpoint_dir(run), run / "checkpoint.old"}) {  // killed mid-swap
    if (fs::exists(dir / "state.json")) return dir / "state.json";
  }
  return {};
}

// Loads the latest state if any; returns false when there is none.
bool load_state(const fs::path& run, Model<float>& model, AdamW& adam, WeightAverager& avg,
                TrainState& st) {
  const fs::path state = state_file(run);
  if (state.empty()) return false;
  const fs::path dir = state.parent_path();
  const ModelConfig& c = model.config();
  model.params() = load_param_file(dir / kModelFile, &c).values;
  adam.first_moment() = load_param_file(dir / "adam_m.safetensors", &c).values;
  adam.second_moment() = load_param_file(dir / "adam_v.safetensors", &c).values;
  read_json_file(dir / "state.json", [&](const nlohmann::json& j) {
    st.step = j.at("step").get<int64_t>();
    adam.set_steps(j.at("adam_steps").get<int64_t>());
    st.averaging_started = j.at("averaging_started").get<bool>();
    // The generator's four words, each a decimal string (JSON numbers stop at 2^53 exactly).
    for (int i = 0; i < 4; ++i) {
      const std::string word = j.at("rng").at(i).get<std::string>();
      const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), st.rng[i]);
      if (ec != std::errc() || end != word.data() + word.size() || word.empty()) {
        throw InputError(fmt::format("{}: rng word {} is not a 64-bit unsigned integer",
                                     (dir / "state.json").string(), i));
      }
    }
  });
  avg.set_started(st.averaging_started);
  if (st.averaging_started) {
    avg.theta0() = load_param_file(dir / "theta0.safetensors", &c).values;
    avg.ema_mut() = load_param_file(dir / "ema.safetensors", &c).values;
    avg.bema_mut() = load_param_file(dir / "bema.safetensors", &c).values;
  }
  return true;
}

// Keeps only the metrics lines of steps ≤ `step` (a resumed run rewrites the rest).
void truncate_metrics(const fs::path& file, int64_t step) {
  if (!fs::exists(file)) return;
  std::ifstream in(file);
  std::string line, kept;
  while (std::getline(in, line)) {
    try {
      if (nlohmann::json::parse(line).at("step").get<int64_t>() <= step) kept += line + "\n";
    } catch (const std::exception&) {
      break;  // a torn last line from a killed process
    }
  }
  write_file_atomic(file, kept);
}

// The outcome of a run whose training had finished: its last logged step and loss, and the
// message its run.json keeps (an early stop's); nothing trained by this process.
RunOutcome finished_outcome(const fs::path& run_dir) {
  RunOutcome out;
  out.status = RunStatus::finished;
  out.trained_before = true;
  std::ifstream in(run_dir / kMetricsFile);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("loss") && j.contains("step")) {
      out.steps = j.at("step").get<int64_t>();
      out.last_loss = j.at("loss").get<double>();
    }
  }
  out.message = read_json_file(run_dir / kRunFile, [](const nlohmann::json& j) {
    return j.value("message", std::string());
  });
  return out;
}

// Periodic validation data: one fixed seed for every run, so every scheme and seed is
// measured on the same batches, and a generator of its own, so the training data RNG never
// sees it.
constexpr uint64_t kValidationSeed = 0x76616c6964617465ULL;  // "validate"

// One periodic validation: over tc.eval_batches validation batches (task length n),
//   loss:     the mean of each batch's loss, the training loss's definition (cross-entropy
//             averaged over the scored positions, over the logits `over` selects);
//   accuracy: the share of all scored positions whose argmax over the vocabulary, or over the
//             class block with loss_over = "classes" (the lowest token on ties), is the
//             target's most likely token (TargetView::most_likely).
// Computed with the inference forward (nothing kept for backward; the training workspace is
// untouched).
struct Validation {
  double loss = 0;
  double accuracy = 0;
};

Validation validate_model(Model<float>& model, const Task& task, const TrainConfig& tc, int64_t n,
                          const LossLogits& over) {
  Rng rng(kValidationSeed);
  std::vector<int64_t> rows;
  std::vector<int32_t> slots;
  std::vector<float> weights;
  double total = 0;
  int64_t right = 0, scored = 0;
  for (int64_t i = 0; i < tc.eval_batches; ++i) {
    const Batch batch = task.make_batch(n, tc.batch, rng, /*validation=*/true);
    rows.clear();
    slots.clear();
    weights.clear();
    for (int64_t r = 0; r < batch.batch * batch.len; ++r) {
      if (batch.target_slot[r] >= 0 && batch.weight[r] != 0.0f) {
        rows.push_back(r);
        slots.push_back(batch.target_slot[r]);
        weights.push_back(batch.weight[r]);
      }
    }
    const float* logits =
        model.forward_rows(batch.tokens.data(), batch.batch, batch.len, batch.fields, rows);
    const int64_t N = static_cast<int64_t>(rows.size());
    total += cross_entropy_over<float>(logits, sparse_targets(batch, slots.data()), weights.data(),
                                       nullptr, N, batch.vocab, over);
    const int32_t first = over ? over->first : 0;
    const int32_t count = over ? over->count : batch.vocab;
    for (int64_t k = 0; k < N; ++k) {
      const float* row = logits + k * batch.vocab + first;
      const int32_t guess = first + static_cast<int32_t>(std::max_element(row, row + count) - row);
      right += guess == batch.target(rows[k]).most_likely() ? 1 : 0;
    }
    scored += N;
  }
  return {.loss = total / static_cast<double>(tc.eval_batches),
          .accuracy = scored > 0 ? static_cast<double>(right) / static_cast<double>(scored) : 0.0};
}

// Appends "PATH was OLD, now NEW" for every leaf where `before` and `after` differ (PATH
// dotted, e.g. "train.lr"); a key on one side only reads "absent" on the other.
void list_json_differences(const std::string& path, const nlohmann::json& before,
                           const nlohmann::json& after, std::vector<std::string>& out) {
  if (before == after) return;
  if (before.is_object() && after.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : before.items()) keys.insert(k);
    for (const auto& [k, v] : after.items()) keys.insert(k);
    for (const std::string& k : keys) {
      list_json_differences(path + "." + k, before.value(k, nlohmann::json()),
                            after.value(k, nlohmann::json()), out);
    }
    return;
  }
  auto text = [](const nlohmann::json& x) {
    return x.is_null() ? std::string("absent") : x.dump();
  };
  out.push_back(fmt::format("{} was {}, now {}", path, text(before), text(after)));
}

}  // namespace

nlohmann::json settings_as_read(nlohmann::json settings) {
  try {
    if (settings.contains("model")) {
      settings["model"] = to_json(model_config_from_json(settings["model"]));
    }
    if (settings.contains("train")) {
      settings["train"] = to_json(train_config_from_json(settings["train"]));
    }
  } catch (const InputError&) {
  }
  return settings;
}

int64_t checkpoint_step(const fs::path& run_dir) {
  const fs::path state = state_file(run_dir);
  if (state.empty()) return 0;
  return read_json_file(state, [](const nlohmann::json& j) { return j.at("step").get<int64_t>(); });
}

std::string to_string(RunStatus s) {
  switch (s) {
    case RunStatus::pending:
      return "pending";
    case RunStatus::running:
      return "running";
    case RunStatus::interrupted:
      return "interrupted";
    case RunStatus::finished:
      return "finished";
    case RunStatus::diverged:
      return "diverged";
  }
  return "?";
}

void prepare_run(const fs::path& run_dir, const RunSpec& spec) {
  nlohmann::json j{{"label", spec.label},
                   {"model", to_json(spec.model)},
                   {"task", spec.task},
                   {"train", to_json(spec.train)},
                   {"status", "pending"}};
  if (!spec.eval.is_null()) j["eval"] = spec.eval;
  const fs::path file = run_dir / kRunFile;
  if (fs::exists(file)) {
    const nlohmann::json old = settings_as_read(parse_json_file(file));
    std::vector<std::string> changes;
    for (const char* key : {"model", "task", "train", "eval"}) {
      list_json_differences(key, old.value(key, nlohmann::json()), j[key], changes);
    }
    if (!changes.empty()) {
      const size_t shown = std::min<size_t>(changes.size(), 4);
      throw UsageError(fmt::format(
          "{}: holds a different run: {}{}; use another output directory, or remove that run "
          "folder to train it again",
          run_dir.string(),
          fmt::join(changes.begin(), changes.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
          changes.size() > shown ? fmt::format(" and {} more", changes.size() - shown) : ""));
    }
    return;  // the same run: keep its status and state
  }
  fs::create_directories(run_dir);
  write_json(file, j);
}

RunSpec read_run_spec(const fs::path& run_dir) {
  const fs::path file = run_dir / kRunFile;
  if (!fs::exists(file)) {
    throw InputError(fmt::format("{}: not a run directory (no {})", run_dir.string(), kRunFile));
  }
  const nlohmann::json j = parse_json_file(file);
  RunSpec spec;
  try {
    spec.label = j.value("label", "");
    spec.model = model_config_from_json(j.at("model"));
    spec.task = j.at("task");
    spec.train = train_config_from_json(j.at("train"));
    if (j.contains("eval")) spec.eval = j.at("eval");
  } catch (const nlohmann::json::exception&) {
    throw InputError(
        fmt::format("{}: a field is missing or of the wrong type (label, model, "
                    "task, train, eval)",
                    file.string()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", file.string(), e.what()));
  }
  return spec;
}

RunStatus read_run_status(const fs::path& run_dir) {
  const fs::path file = run_dir / kRunFile;
  if (!fs::exists(file)) return RunStatus::pending;
  const std::string s = read_json_file(
      file, [](const nlohmann::json& j) { return j.value("status", std::string("pending")); });
  for (RunStatus r : {RunStatus::pending, RunStatus::running, RunStatus::interrupted,
                      RunStatus::finished, RunStatus::diverged}) {
    if (to_string(r) == s) return r;
  }
  return RunStatus::pending;
}

void evaluate_run(const fs::path& run_dir, bool progress) {
  const RunSpec spec = read_run_spec(run_dir);
  if (spec.eval.is_null()) return;
  auto task = make_task_from_json(spec.task);
  EvalConfig config;
  std::vector<std::string> weights;
  try {
    config.lengths = spec.eval.at("lengths").get<std::vector<int64_t>>();
    config.samples = spec.eval.at("samples").get<int64_t>();
    config.seed = spec.eval.at("seed").get<uint64_t>();
    config.max_rows = spec.eval.at("max_rows").get<int64_t>();
    weights = spec.eval.at("weights").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(
        fmt::format("{}/run.json: eval settings: lengths, samples, seed, max_rows "
                    "or weights is missing or of the wrong type",
                    run_dir.string()));
  }
  set_num_threads(spec.train.threads);
  for (const std::string& w : weights) {
    LoadedParams loaded = load_param_file(weights_file(run_dir / "final", w), &spec.model);
    Model<float> model(loaded.config);
    model.params() = std::move(loaded.values);
    if (w != "raw") model.apply_weight_constraints();  // nGPT: averages leave the sphere
    EvalProgress where{w, 0, static_cast<int>(config.lengths.size())};
    write_eval_progress(run_dir, where);
    const auto results = evaluate(model, *task, config, [&](const LengthResult& r) {
      ++where.lengths_done;
      write_eval_progress(run_dir, where);
      if (progress) {
        std::fprintf(stderr, "\r%s  eval %s length %lld: %.1f s   ", spec.label.c_str(), w.c_str(),
                     static_cast<long long>(r.length), r.seconds);
      }
    });
    write_file_atomic(run_dir / ("eval_" + w + ".csv"), eval_csv(results));
    write_file_atomic(run_dir / ("eval_" + w + ".json"),
                      nlohmann::json{{"weights", w}, {"results", eval_json(results)}}.dump(2));
  }
  remove_eval_progress(run_dir);
  if (progress) std::fprintf(stderr, "\n");
}

fs::path weights_file(const fs::path& final_dir, const std::string& weights) {
  if (weights == "raw") return final_dir / kModelFile;
  if (weights == "ema") return final_dir / "ema.safetensors";
  if (weights == "bema") return final_dir / "bema.safetensors";
  throw UsageError("unknown --weights '" + weights + "'; allowed: raw, ema, bema");
}

RunOutcome train_run(const fs::path& run_dir, bool resume, const TrainHooks& hooks) {
  const RunSpec spec = read_run_spec(run_dir);
  // One trainer per run directory: a second one (say, a rerun while an orphaned child still
  // trains) would interleave checkpoints. The lock is released when training returns or the
  // process ends (so one process, normlab.Trainer, may train the run again after a stop).
  struct RunLock {
    int fd;
    ~RunLock() {
      if (fd >= 0) ::close(fd);
    }
  } lock{::open((run_dir / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)};
  if (lock.fd < 0) {
    throw InputError(
        fmt::format("{}: cannot open: {}", (run_dir / ".lock").string(), std::strerror(errno)));
  }
  if (::flock(lock.fd, LOCK_EX | LOCK_NB) != 0) {
    if (!hooks.wait_for_run_lock) {
      throw InputError(fmt::format("{}: another process is training this run", run_dir.string()));
    }
    std::fprintf(stderr, "%s: another process is training this run; waiting for it to stop\n",
                 run_dir.c_str());
    while (::flock(lock.fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        throw InputError(
            fmt::format("{}: cannot lock: {}", run_dir.string(), std::strerror(errno)));
      }
      if (const int signal = interrupt_signal(); signal != 0) {
        throw Interrupted(fmt::format("{}: stopped by {} while waiting; nothing trained",
                                      run_dir.string(), interrupt_name(signal)));
      }
    }
  }
  // A finished run (status and final weights written) is not trained again: a stop during its
  // evaluation leaves it so, and only the evaluation remains.
  if (resume && read_run_status(run_dir) == RunStatus::finished &&
      fs::exists(run_dir / "final" / kModelFile)) {
    return finished_outcome(run_dir);
  }
  remove_eval_progress(run_dir);  // an earlier evaluation's, stopped: this run trains first
  const TrainConfig& tc = spec.train;
  auto task = make_task_from_json(spec.task);
  if (task->vocab() != spec.model.vocab) {
    throw UsageError(fmt::format("model vocab {} does not match task {} vocab {}", spec.model.vocab,
                                 task->label(), task->vocab()));
  }
  const LossLogits over = loss_logits(tc, *task);  // the logits of every loss below
  // Training lengths: the task's valid lengths within [min_len, max_len].
  const LengthRange range = task->length_range();
  auto on_grid_up = [&](int64_t v) {
    v = std::max(v, range.min);
    return v + (range.step - (v - range.min) % range.step) % range.step;
  };
  const int64_t first = on_grid_up(tc.min_len);
  const int64_t last = std::min(tc.max_len, range.max);
  if (first > last) {
    throw UsageError(fmt::format("task {} has no valid length in the training range [{}, {}]",
                                 task->label(), tc.min_len, tc.max_len));
  }
  const int64_t choices = (last - first) / range.step + 1;
  // Periodic validation length: eval_length, or the longest training length.
  const int64_t val_len = tc.eval_length > 0 ? tc.eval_length : first + (choices - 1) * range.step;
  if (tc.eval_every > 0) task->check_length(val_len);

  set_num_threads(tc.threads);
  Model<float> model(spec.model);
  model.init(tc.seed);
  AdamW adam(model.layout(), tc.adam, model.scheme().weight_decay);
  WeightAverager avg(tc.averaging, model.layout().total());
  TrainState st;
  Rng rng(data_seed(tc.seed));
  const bool resumed = resume && load_state(run_dir, model, adam, avg, st);
  if (resumed) {
    rng.set_state(st.rng);
  } else {
    std::error_code ec;
    fs::remove_all(checkpoint_dir(run_dir), ec);
    fs::remove(run_dir / kMetricsFile, ec);
  }
  truncate_metrics(run_dir / kMetricsFile, st.step);
  set_status(run_dir, RunStatus::running);

  FILE* metrics = std::fopen((run_dir / kMetricsFile).c_str(), "a");
  if (metrics == nullptr)
    throw InputError(fmt::format("{}: cannot write", (run_dir / kMetricsFile).string()));
  RunOutcome out;
  double last_val = NAN;
  bool accurate_enough = false;  // stop_accuracy passed at a validation after step 0
  auto validate = [&] {
    const Validation v = validate_model(model, *task, tc, val_len, over);
    last_val = v.loss;
    nlohmann::json line{{"step", st.step}, {"val_loss", v.loss}};
    if (tc.stop_accuracy > 0) {
      line["val_accuracy"] = v.accuracy;
      accurate_enough = st.step > 0 && v.accuracy > tc.stop_accuracy;
    }
    std::fprintf(metrics, "%s\n", line.dump().c_str());
    std::fflush(metrics);
  };
  if (tc.eval_every > 0 && st.step == 0) validate();
  std::vector<float> dlogits;
  const auto t0 = std::chrono::steady_clock::now();
  auto last_print = t0;
  RecentRate recent;  // the speed on the progress line
  const int64_t start_step = st.step;
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // The resumable state of step st.step, and when and of which step it was last written.
  int64_t checkpointed_step = resumed ? st.step : 0;
  auto checkpointed_at = t0;
  auto checkpoint = [&] {
    const uint64_t* s = rng.state();
    std::copy(s, s + 4, st.rng);
    save_state(run_dir, model, adam, avg, st);
    checkpointed_step = st.step;
    checkpointed_at = std::chrono::steady_clock::now();
  };
  // Stops before the next step: the state saved, the run interrupted (resumable).
  auto interrupt = [&] {
    checkpoint();
    out.status = RunStatus::interrupted;
  };
  while (st.step < tc.steps) {
    int64_t n = first + static_cast<int64_t>(rng.below(choices)) * range.step;
    std::optional<Batch> given;
    if (hooks.next_batch) {
      given = hooks.next_batch(st.step + 1);
      if (!given) {
        interrupt();
        break;
      }
      n = given->len;
    }
    const Batch batch = given ? std::move(*given) : task->make_batch(n, tc.batch, rng);
    const double lr = learning_rate(st.step, tc.steps, tc.warmup, tc.adam.lr, tc.decay,
                                    tc.min_lr_ratio, tc.decay_fraction);
    // Dropout masks of this step (core/kernels/dropout.hpp); nothing else runs with them.
    model.set_dropout_key(dropout_step_key(tc.seed, st.step));
    const StepResult r = train_step(model, adam, batch, lr, dlogits, hooks.loss, over);
    model.set_dropout_key(std::nullopt);
    if (r.stopped) {
      interrupt();
      break;
    }
    // The loss of this step is computed before its update, so an update can still leave
    // non-finite weights: both end the run before anything non-finite is saved.
    const bool loss_finite = std::isfinite(r.loss);
    if (!loss_finite ||
        !all_finite(model.params().data(), static_cast<int64_t>(model.params().size()))) {
      out.status = RunStatus::diverged;
      out.message = fmt::format(
          "{} at step {}; {}",
          loss_finite ? "the weights became NaN or Inf" : fmt::format("the loss became {}", r.loss),
          st.step + 1, what_divergence_keeps(st.step, checkpointed_step, !loss_finite));
      break;
    }
    ++st.step;
    avg.observe(st.step, model.params());
    st.averaging_started = avg.started();
    out.last_loss = r.loss;
    if (st.step % tc.log_every == 0 || st.step == tc.steps) {
      const double sps = (st.step - start_step) / std::max(elapsed(), 1e-9);
      nlohmann::json line{{"step", st.step},          {"loss", r.loss}, {"lr", lr},
                          {"grad_norm", r.grad_norm}, {"length", n},    {"steps_per_s", sps}};
      std::fprintf(metrics, "%s\n", line.dump().c_str());
      std::fflush(metrics);
    }
    if (tc.eval_every > 0 && (st.step % tc.eval_every == 0 || st.step == tc.steps)) validate();
    if (hooks.progress) {
      const auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - last_print).count() > 0.25 || st.step == tc.steps) {
        last_print = now;
        recent.observe(steady_seconds(), st.step);
        const double sps = recent.steps_per_s((st.step - start_step) / std::max(elapsed(), 1e-9));
        const std::string val =
            std::isfinite(last_val) ? fmt::format("  val {:.4f}", last_val) : std::string();
        std::fprintf(stderr, "\r%s  step %lld/%lld  loss %.4f%s  %.1f steps/s  ETA %s   ",
                     spec.label.c_str(), static_cast<long long>(st.step),
                     static_cast<long long>(tc.steps), r.loss, val.c_str(), sps,
                     format_duration((tc.steps - st.step) / sps).c_str());
        std::fflush(stderr);
      }
    }
    const double since_checkpoint =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - checkpointed_at).count();
    if ((st.step % tc.checkpoint_every == 0 || since_checkpoint >= hooks.checkpoint_seconds) &&
        st.step < tc.steps) {
      checkpoint();
    }
    if (hooks.kill_at_step > 0 && st.step == hooks.kill_at_step) {
      std::fclose(metrics);
      std::raise(SIGKILL);
    }
    if (hooks.interrupt_at_step > 0 && st.step == hooks.interrupt_at_step) std::raise(SIGINT);
    bool stop = false;
    if (hooks.on_step && hooks.on_step_every > 0 &&
        (st.step % hooks.on_step_every == 0 || st.step == tc.steps)) {
      const StepReport report{st.step, tc.steps, r.loss, lr, r.grad_norm, n, last_val};
      stop = !hooks.on_step(report, model);
    }
    if ((stop || (hooks.stop_on_interrupt && interrupt_signal() != 0)) && st.step < tc.steps) {
      interrupt();
      break;
    }
    if (accurate_enough) {
      out.message = fmt::format("stopped at step {} of {}: validation accuracy above {}", st.step,
                                tc.steps, tc.stop_accuracy);
      break;
    }
  }
  std::fclose(metrics);
  if (hooks.progress) std::fprintf(stderr, "\n");
  out.steps = st.step;
  out.seconds = elapsed();
  if (out.status == RunStatus::diverged) {
    set_status(run_dir, RunStatus::diverged, out.message);
    return out;
  }
  if (out.status == RunStatus::interrupted) {
    set_status(run_dir, RunStatus::interrupted);
    return out;
  }
  // Final weights: raw, and the averaged ones (the raw ones if averaging never started).
  const fs::path fin = run_dir / "final";
  fs::create_directories(fin);
  const ModelConfig& c = model.config();
  save_param_file(fin / kModelFile, c, model.layout(), model.params());
  save_param_file(fin / "ema.safetensors", c, model.layout(),
                  avg.started() ? avg.ema() : model.params());
  save_param_file(fin / "bema.safetensors", c, model.layout(),
                  avg.started() ? avg.bema() : model.params());
  out.status = RunStatus::finished;
  set_status(run_dir, RunStatus::finished, out.message);
  return out;
}

}  // namespace normlab
