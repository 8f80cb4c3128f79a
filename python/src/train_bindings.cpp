// normlab.Trainer's compiled half: a run folder prepared from Python values, and the C++ trainer
// of `normlab train` run in this process with a Python callback every N steps
// (normlab/train/trainer.hpp, docs/python.md "Training from Python").
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "loss_batch.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/model/model_config.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/trainer.hpp"
#include "token_arrays.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace normlab::python {
namespace {

nlohmann::json parse(const std::string& text, const char* what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("{}: not valid JSON", what));
  }
}

// Every key of `given` must be one of `known`'s, at every depth: "train.averaging.evry".
void check_keys(const nlohmann::json& given, const nlohmann::json& known, const std::string& at) {
  for (const auto& [key, value] : given.items()) {
    if (!known.contains(key)) {
      std::vector<std::string> allowed;
      for (const auto& [k, v] : known.items()) allowed.push_back(k);
      throw InputError(
          fmt::format("{}{}: unknown key; allowed: {}", at, key, fmt::join(allowed, ", ")));
    }
    if (value.is_object() && known[key].is_object()) check_keys(value, known[key], at + key + ".");
  }
}

// Inside a catch block of a hook of the trainer: keeps the Python error, or a normlab
// InputError as a ValueError, in `raised`, to be raised once the run is saved; rethrows
// anything else.
void keep_error(std::unique_ptr<py::error_already_set>& raised) {
  try {
    throw;
  } catch (py::error_already_set& e) {
    raised = std::make_unique<py::error_already_set>(std::move(e));
  } catch (const InputError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
    raised = std::make_unique<py::error_already_set>();
  }
}

// RUN/run.json from a model config, a task {"name", params}, the training settings that differ
// from the defaults, and optional evaluation settings; the model's vocab must be the task's.
void prepare(const std::string& run_dir, const std::string& label, const std::string& model_json,
             const std::string& task_json, const std::string& train_json,
             const std::string& eval_json) {
  RunSpec spec;
  spec.label = label;
  spec.model = model_config_from_json(parse(model_json, "model config"));
  spec.task = parse(task_json, "task");
  const std::unique_ptr<Task> task = make_task_from_json(spec.task);
  if (task->vocab() != spec.model.vocab) {
    throw InputError(fmt::format("model: vocab {}, the task's is {}; build the model with vocab={}",
                                 spec.model.vocab, task->vocab(), task->vocab()));
  }
  nlohmann::json train = to_json(TrainConfig{});
  const nlohmann::json given = parse(train_json, "train");
  check_keys(given, train, "train.");
  train.merge_patch(given);
  spec.train = train_config_from_json(train);
  if (!eval_json.empty()) spec.eval = parse(eval_json, "eval");
  prepare_run(run_dir, spec);
}

// Trains RUN like `normlab train [--resume]`, calling `callback(info, params)` after every
// `every`-th step and the last: info a dict of the StepReport, params a float32 copy of the
// flat parameter vector. A false return stops the run there (interrupted, resumable); an
// exception in the callback does too, and is raised again once the state is saved.
//
// `data(step)`, if not None, gives step `step`'s batch as (tokens, targets[, weight]) in the
// arrays of Model.grads (loss_batch.hpp), or None to stop; `loss(logits, batch)`, if not None,
// gives (loss, dL/dlogits) for logits (B, T, V) and the batch as a dict of tokens, targets
// (B, T, V) and weight (B, T). An exception in either stops the run as the callback's does.
py::dict train(const std::string& run_dir, bool resume, int64_t every, py::object callback,
               py::object data, py::object loss) {
  TrainHooks hooks;
  hooks.on_step_every = every;
  std::unique_ptr<py::error_already_set> raised;
  const int vocab = read_run_spec(run_dir).model.vocab;
  if (!data.is_none()) {
    hooks.next_batch = [&, vocab](int64_t step) -> std::optional<Batch> {
      py::gil_scoped_acquire gil;
      try {
        const py::object given = data(step);
        if (given.is_none()) return std::nullopt;
        const py::tuple t = given.cast<py::tuple>();
        if (t.size() != 2 && t.size() != 3) {
          throw InputError(fmt::format(
              "data: step {} gave {} values; allowed: (tokens, targets) or (tokens, targets, "
              "weight)",
              step, t.size()));
        }
        const py::array tokens = t[0].cast<py::array>();
        const TokenBatch tb =
            token_batch(tokens, tokens.ndim() == 3 ? static_cast<int>(tokens.shape(2)) : 1);
        std::optional<py::array> weight;
        if (t.size() == 3 && !t[2].is_none()) weight = t[2].cast<py::array>();
        return loss_batch(tb, t[1].cast<py::array>(), weight, vocab);
      } catch (...) {
        keep_error(raised);
        return std::nullopt;
      }
    };
  }
  if (!loss.is_none()) {
    hooks.loss = [&](const float* logits, const Batch& b, float* dlogits) -> std::optional<double> {
      py::gil_scoped_acquire gil;
      try {
        const std::vector<py::ssize_t> shape = {b.batch, b.len, b.vocab};
        py::array_t<float> z(shape);
        std::copy_n(logits, z.size(), z.mutable_data());
        py::dict batch;
        py::array_t<int32_t> tokens(b.fields == 1
                                        ? std::vector<py::ssize_t>{b.batch, b.len}
                                        : std::vector<py::ssize_t>{b.batch, b.len, b.fields});
        std::copy(b.tokens.begin(), b.tokens.end(), tokens.mutable_data());
        py::array_t<float> weight({b.batch, b.len});
        std::copy(b.weight.begin(), b.weight.end(), weight.mutable_data());
        batch["tokens"] = tokens;
        batch["targets"] = dense_targets(b);
        batch["weight"] = weight;
        const py::tuple out = loss(z, batch).cast<py::tuple>();
        const auto d = out[1].cast<py::array_t<float, py::array::c_style | py::array::forcecast>>();
        if (d.ndim() != 3 || d.shape(0) != b.batch || d.shape(1) != b.len ||
            d.shape(2) != b.vocab) {
          throw InputError(
              fmt::format("loss: dL/dlogits has {} values; allowed: the logits' "
                          "shape ({}, {}, {})",
                          d.size(), b.batch, b.len, b.vocab));
        }
        std::copy_n(d.data(), d.size(), dlogits);
        return out[0].cast<double>();
      } catch (...) {
        keep_error(raised);
        return std::nullopt;
      }
    };
  }
  if (!callback.is_none()) {
    hooks.on_step = [&](const StepReport& r, const Model<float>& model) {
      py::gil_scoped_acquire gil;
      try {
        py::dict info;
        info["step"] = r.step;
        info["steps"] = r.steps;
        info["loss"] = r.loss;
        info["lr"] = r.lr;
        info["grad_norm"] = r.grad_norm;
        info["length"] = r.length;
        info["val_loss"] = r.val_loss;
        const std::vector<float>& p = model.params();
        py::array_t<float> params(static_cast<py::ssize_t>(p.size()));
        std::copy(p.begin(), p.end(), params.mutable_data());
        const py::object keep = callback(info, params);
        return keep.is_none() || keep.cast<bool>();
      } catch (py::error_already_set& e) {
        raised = std::make_unique<py::error_already_set>(std::move(e));
        return false;
      }
    };
  }
  RunOutcome out;
  {
    py::gil_scoped_release release;
    out = train_run(run_dir, resume, hooks);
  }
  if (raised) throw std::move(*raised);
  py::dict result;
  result["status"] = to_string(out.status);
  result["steps"] = out.steps;
  result["last_loss"] = out.last_loss;
  result["seconds"] = out.seconds;
  result["message"] = out.message;
  return result;
}

}  // namespace

void add_train_bindings(py::module_& m) {
  m.def("prepare_run", &prepare, py::arg("run_dir"), py::arg("label"), py::arg("model_json"),
        py::arg("task_json"), py::arg("train_json"), py::arg("eval_json"));
  m.def("train_run", &train, py::arg("run_dir"), py::arg("resume"), py::arg("every"),
        py::arg("callback"), py::arg("data"), py::arg("loss"));
  m.def(
      "run_status", [](const std::string& run_dir) { return to_string(read_run_status(run_dir)); },
      py::arg("run_dir"));
  m.def(
      "checkpoint_step", [](const std::string& run_dir) { return checkpoint_step(run_dir); },
      py::arg("run_dir"));
}

}  // namespace normlab::python
