// What a --checkpoint argument names, shared by the commands that read trained or fresh
// weights (eval, probe): a run directory (RUN, with run.json and final/), its final/
// directory, a bare checkpoint directory (as `normlab init` writes), or one weights file
// (which then decides raw, ema or bema).
//
// The task comes from --task NAME [--task-param KEY=VALUE ...] when given, else from the
// run's run.json; a bare checkpoint has no task.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "normlab/model/model.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab::cli {

struct CheckpointSource {
  std::filesystem::path dir;      // the directory holding the weights (RUN/final for a run)
  std::filesystem::path run_dir;  // the run directory; empty for a bare checkpoint
  std::filesystem::path file;     // the weights file chosen by --weights
  std::string weights;            // raw, ema or bema
};

// Throws InputError for a directory that does not exist or a run without final weights.
CheckpointSource resolve_checkpoint(const std::string& checkpoint, const std::string& weights);

// The checkpoint's weights in a new model; nGPT averages are put back on the sphere.
// Throws InputError for a missing or broken file.
std::unique_ptr<Model<float>> load_source_model(const CheckpointSource& source);

// "key=value" pairs into task JSON {"name": task, key: value ...}: integers, then numbers,
// else strings. UsageError for an item that is not KEY=VALUE.
nlohmann::json task_json_from_options(const std::string& task,
                                      const std::vector<std::string>& task_params);

// The task: from --task when given, else the run's. Without either, a UsageError that says
// to give --task when `required`, else no task (null json and task).
struct SourceTask {
  nlohmann::json json;  // null when there is no task
  std::unique_ptr<Task> task;
};
SourceTask resolve_task(const CheckpointSource& source, const std::string& checkpoint_arg,
                        const std::string& task, const std::vector<std::string>& task_params,
                        bool required);

// UsageError when the model's vocabulary is not the task's.
void check_task_vocab(const Task& task, int model_vocab);

}  // namespace normlab::cli
