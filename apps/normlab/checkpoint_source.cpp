#include "checkpoint_source.hpp"

#include <fmt/format.h>

#include "normlab/base/errors.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/train/trainer.hpp"

namespace normlab::cli {
namespace fs = std::filesystem;

CheckpointSource resolve_checkpoint(const std::string& checkpoint, const std::string& weights) {
  CheckpointSource s;
  s.weights = weights;
  s.dir = checkpoint;
  if (fs::is_regular_file(s.dir)) {
    // A weights file itself (RUN/final/bema.safetensors, CKPT/model.safetensors): the file
    // decides which weights they are.
    s.file = s.dir;
    s.dir = s.file.parent_path();
    const std::string stem = s.file.stem().string();
    s.weights = stem == "ema" || stem == "bema" ? stem : "raw";
    if (fs::exists(s.dir.parent_path() / "run.json")) s.run_dir = s.dir.parent_path();
    return s;
  }
  if (!fs::is_directory(s.dir)) {
    throw InputError(fmt::format(
        "{}: no such checkpoint (allowed: a run directory, its final/, a checkpoint directory "
        "or a weights file)",
        s.dir.string()));
  }
  if (fs::exists(s.dir / "run.json")) {
    s.run_dir = s.dir;
    s.dir = s.dir / "final";
    if (!fs::exists(s.dir)) {
      throw InputError(
          fmt::format("{}: the run has no final weights yet (status {}); "
                      "train it to the end first",
                      s.run_dir.string(), to_string(read_run_status(s.run_dir))));
    }
  } else if (fs::exists(s.dir.parent_path() / "run.json")) {
    s.run_dir = s.dir.parent_path();
  }
  s.file = weights_file(s.dir, weights);
  return s;
}

std::unique_ptr<Model<float>> load_source_model(const CheckpointSource& source) {
  LoadedParams loaded = load_param_file(source.file);
  auto model = std::make_unique<Model<float>>(loaded.config);
  model->params() = std::move(loaded.values);
  if (source.weights != "raw") model->apply_weight_constraints();  // averages leave the sphere
  return model;
}

nlohmann::json task_json_from_options(const std::string& task,
                                      const std::vector<std::string>& task_params) {
  nlohmann::json j{{"name", task}};
  for (const std::string& kv : task_params) {
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

SourceTask resolve_task(const CheckpointSource& source, const std::string& checkpoint_arg,
                        const std::string& task, const std::vector<std::string>& task_params,
                        bool required) {
  SourceTask out;
  if (!task.empty()) {
    out.json = task_json_from_options(task, task_params);
  } else if (!source.run_dir.empty()) {
    out.json = read_run_spec(source.run_dir).task;
  } else if (required) {
    throw UsageError(
        fmt::format("{} is not a training run, so the task is unknown; give --task NAME "
                    "[--task-param KEY=VALUE ...]",
                    checkpoint_arg));
  } else {
    return out;
  }
  try {
    out.task = make_task_from_json(out.json);
  } catch (const InputError& e) {
    throw UsageError(e.what());
  }
  return out;
}

void check_task_vocab(const Task& task, int model_vocab) {
  if (model_vocab != task.vocab()) {
    throw UsageError(fmt::format("the model's vocabulary ({}) does not match task {} ({})",
                                 model_vocab, task.label(), task.vocab()));
  }
}

}  // namespace normlab::cli
