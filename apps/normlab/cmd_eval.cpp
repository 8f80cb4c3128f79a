// `normlab eval`: every metric of the task at each length, with 95% intervals; a table on
// stdout, CSV and JSON files.
//
// --checkpoint accepts a run directory (RUN, with run.json and final/), its final/
// directory, or a bare checkpoint directory (then --task is required).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "core/parallel.hpp"
#include "normlab/atomic_file.hpp"
#include "normlab/checkpoint.hpp"
#include "normlab/errors.hpp"
#include "normlab/evaluator.hpp"
#include "normlab/trainer.hpp"

namespace normlab::cli {
namespace fs = std::filesystem;

namespace {

struct EvalOptions {
  std::string checkpoint;
  std::vector<int64_t> lengths = {16, 64, 256, 1024, 4096, 16384};
  int64_t samples = 256;
  std::string weights = "raw";
  std::string out;
  std::string task;
  std::vector<std::string> task_params;
  uint64_t seed = EvalConfig{}.seed;
  int threads = 1;
};

// "key=value" pairs into task JSON: integers, then numbers, else strings.
nlohmann::json task_from_options(const EvalOptions& o) {
  nlohmann::json j{{"name", o.task}};
  for (const std::string& kv : o.task_params) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError(fmt::format("--task-param '{}' is not KEY=VALUE", kv));
    }
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    try {
      size_t used = 0;
      const long long i = std::stoll(value, &used);
      if (used == value.size()) {
        j[key] = i;
        continue;
      }
      const double d = std::stod(value, &used);
      if (used == value.size()) {
        j[key] = d;
        continue;
      }
    } catch (const std::exception&) {
    }
    j[key] = value;
  }
  return j;
}

void run_eval(const EvalOptions& o) {
  set_num_threads(o.threads);
  fs::path dir = o.checkpoint;
  if (!fs::is_directory(dir)) {
    throw InputError(fmt::format("{}: no such checkpoint directory", dir.string()));
  }
  fs::path run_dir;
  if (fs::exists(dir / "run.json")) {
    run_dir = dir;
    dir = dir / "final";
    if (!fs::exists(dir)) {
      throw InputError(
          fmt::format("{}: the run has no final weights yet (status {}); "
                      "train it to the end first",
                      run_dir.string(), to_string(read_run_status(run_dir))));
    }
  } else if (fs::exists(dir.parent_path() / "run.json")) {
    run_dir = dir.parent_path();
  }
  nlohmann::json task_json;
  if (!o.task.empty()) {
    task_json = task_from_options(o);
  } else if (!run_dir.empty()) {
    task_json = read_run_spec(run_dir).task;
  } else {
    throw UsageError(
        fmt::format("{} is not a training run, so the task is unknown; give --task NAME "
                    "[--task-param KEY=VALUE ...]",
                    o.checkpoint));
  }
  std::unique_ptr<Task> task;
  try {
    task = make_task_from_json(task_json);
  } catch (const InputError& e) {
    throw UsageError(e.what());
  }
  const fs::path file = weights_file(dir, o.weights);
  LoadedParams loaded = load_param_file(file);
  Model<float> model(loaded.config);
  model.params() = std::move(loaded.values);
  if (o.weights != "raw") model.apply_weight_constraints();  // nGPT: averages leave the sphere
  if (model.config().vocab != task->vocab()) {
    throw UsageError(fmt::format("the model's vocabulary ({}) does not match task {} ({})",
                                 model.config().vocab, task->label(), task->vocab()));
  }
  EvalConfig config;
  config.lengths = o.lengths;
  config.samples = o.samples;
  config.seed = o.seed;
  std::fprintf(stderr, "evaluating %s (%s weights) on %s, %lld samples per length\n",
               file.string().c_str(), o.weights.c_str(), task->label().c_str(),
               static_cast<long long>(o.samples));
  const auto results = evaluate(model, *task, config, [](const LengthResult& r) {
    std::fprintf(stderr, "  length %lld done in %.2f s\n", static_cast<long long>(r.length),
                 r.seconds);
  });
  std::printf("%s", format_eval_table(results).c_str());
  const std::string prefix = o.out.empty() ? (dir / ("eval_" + o.weights)).string() : o.out;
  write_file_atomic(prefix + ".csv", eval_csv(results));
  nlohmann::json j{
      {"checkpoint", file.string()},  {"weights", o.weights}, {"task", task_json},
      {"samples", o.samples},         {"seed", o.seed},       {"model", to_json(model.config())},
      {"results", eval_json(results)}};
  write_file_atomic(prefix + ".json", j.dump(2) + "\n");
  std::printf("wrote %s.csv and %s.json\n", prefix.c_str(), prefix.c_str());
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Evaluate a checkpoint across lengths");
  auto o = std::make_shared<EvalOptions>();
  cmd->add_option("--checkpoint", o->checkpoint, "Run directory, its final/, or a checkpoint")
      ->required();
  cmd->add_option("--lengths", o->lengths, "Task lengths, e.g. 16,64,256")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--samples", o->samples, "Sequences per length")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--weights", o->weights, "Which weights of a run")
      ->check(CLI::IsMember({"raw", "ema", "bema"}))
      ->capture_default_str();
  cmd->add_option("--out", o->out,
                  "Output prefix for .csv and .json (default: beside the weights)");
  cmd->add_option("--task", o->task, "Task name (needed for a checkpoint that is not a run)");
  cmd->add_option("--task-param", o->task_params, "Task parameter KEY=VALUE (repeatable)");
  cmd->add_option("--seed", o->seed, "Evaluation data seed")->capture_default_str();
  cmd->add_option("--threads", o->threads, "Threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->callback([o] { run_eval(*o); });
}

}  // namespace normlab::cli
