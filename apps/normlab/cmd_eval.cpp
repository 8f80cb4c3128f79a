// `normlab eval`: every metric of the task at each length, with 95% intervals; a table on
// stdout, CSV and JSON files.
//
// --checkpoint accepts a run directory (RUN, with run.json and final/), its final/
// directory, or a bare checkpoint directory (then --task is required).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "checkpoint_source.hpp"
#include "commands.hpp"
#include "normlab/core/threads.hpp"
#include "normlab/eval/evaluator.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/progress.hpp"
#include "normlab/train/train_config.hpp"
#include "validators.hpp"

namespace normlab::cli {
namespace {

struct EvalOptions {
  std::string checkpoint;
  std::vector<int64_t> lengths;  // empty: default_probe_lengths of the task
  int64_t samples = 256;
  std::string weights = "raw";
  std::string out;
  std::string task;
  std::vector<std::string> task_params;
  uint64_t seed = EvalConfig{}.seed;
  int threads = 1;
};

void run_eval(const EvalOptions& o) {
  set_num_threads(o.threads);
  const CheckpointSource source = resolve_checkpoint(o.checkpoint, o.weights);
  const SourceTask task = resolve_task(source, o.checkpoint, o.task, o.task_params, true);
  auto model = load_source_model(source);
  check_task_vocab(*task.task, model->config().vocab);
  EvalConfig config;
  config.lengths = o.lengths.empty() ? default_probe_lengths(*task.task) : o.lengths;
  config.samples = o.samples;
  config.seed = o.seed;
  std::fprintf(stderr, "evaluating %s (%s weights) on %s, %lld samples per length\n",
               source.file.string().c_str(), source.weights.c_str(), task.task->label().c_str(),
               static_cast<long long>(o.samples));
  std::vector<double> costs;
  for (int64_t n : config.lengths) {
    costs.push_back(forward_cost(task.task->sequence_length(n), model->config().width));
  }
  ItemProgress progress(costs);
  const auto results = evaluate(*model, *task.task, config, [&](const LengthResult& r) {
    progress.item_done(fmt::format("length {}", r.length));
  });
  std::printf("%s", format_eval_table(results).c_str());
  const std::string prefix =
      o.out.empty() ? (source.dir / ("eval_" + source.weights)).string() : o.out;
  write_file_atomic(prefix + ".csv", eval_csv(results));
  nlohmann::json j{{"checkpoint", source.file.string()},
                   {"weights", source.weights},
                   {"task", task.json},
                   {"samples", o.samples},
                   {"seed", o.seed},
                   {"model", to_json(model->config())},
                   {"results", eval_json(results)}};
  write_file_atomic(prefix + ".json", j.dump(2) + "\n");
  std::printf("wrote %s.csv and %s.json\n", prefix.c_str(), prefix.c_str());
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Evaluate a checkpoint across lengths");
  auto o = std::make_shared<EvalOptions>();
  cmd->add_option("--checkpoint", o->checkpoint,
                  "Run directory, its final/, a checkpoint, or a weights file")
      ->required();
  cmd->add_option("--lengths", o->lengths,
                  "Task lengths, e.g. 16,64,256 (default: the powers of two up to 2^14 the task "
                  "has, and its longest)")
      ->delimiter(',')
      ->check(integer_in(1, int64_t{1} << 24));
  cmd->add_option("--samples", o->samples, "Sequences per length")
      ->check(integer_in(1, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--weights", o->weights, "Which weights of a run")
      ->check(CLI::IsMember({"raw", "ema", "bema"}))
      ->capture_default_str();
  cmd->add_option("--out", o->out, "Output prefix for .csv and .json (default: beside the weights)")
      ->check(non_empty_path());
  cmd->add_option("--task", o->task, "Task name (needed for a checkpoint that is not a run)");
  cmd->add_option("--task-param", o->task_params, "Task parameter KEY=VALUE (repeatable)");
  cmd->add_option("--seed", o->seed, "Evaluation data seed")
      ->check(seed_value())
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Threads")
      ->check(integer_in(train_limits::threads))
      ->capture_default_str();
  cmd->callback([o] { run_eval(*o); });
}

}  // namespace normlab::cli
