// normlab.tasks' compiled half: the task registry and batches of any task as numpy arrays.
// Letters: B batch, T sequence length, F fields, V vocab.
#include <algorithm>
#include <string>
#include <variant>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "normlab/base/batch.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/tasks/task.hpp"

namespace py = pybind11;

namespace normlab::python {
namespace {

py::object param_value(const TaskParam& p) {
  return std::visit([](const auto& v) { return py::cast(v); }, p);
}

// The task built from its name and a JSON object of parameters (defaults for the rest; an
// unknown parameter is an error naming it).
std::unique_ptr<Task> task_of(const std::string& name, const std::string& params_json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(params_json);
  } catch (const nlohmann::json::exception&) {
    throw InputError("task parameters: not valid JSON");
  }
  j["name"] = name;
  return make_task_from_json(j);
}

}  // namespace

void add_task_bindings(py::module_& m) {
  m.def("task_list", [] {
    py::list out;
    for (const TaskInfo& info : task_registry()) {
      py::dict params;
      for (const TaskParamDef& d : info.params) params[py::str(d.name)] = param_value(d.fallback);
      out.append(py::dict(py::arg("name") = info.name, py::arg("summary") = info.summary,
                          py::arg("params") = params));
    }
    return out;
  });
  m.def(
      "task_describe",
      [](const std::string& name, const std::string& params_json) {
        const auto task = task_of(name, params_json);
        const LengthRange r = task->length_range();
        return py::dict(py::arg("label") = task->label(), py::arg("vocab") = task->vocab(),
                        py::arg("fields") = task->fields(), py::arg("min_length") = r.min,
                        py::arg("max_length") = r.max, py::arg("length_step") = r.step,
                        py::arg("metrics") = task->metric_names());
      },
      py::arg("name"), py::arg("params_json"));
  // I.i.d. uniform tokens (B, T) int32 and next-token targets (B, T) int32 (-1 at the last
  // position): the random batches of `normlab grads`, `train-steps` and the probes' random input.
  m.def(
      "random_tokens",
      [](int vocab, int64_t batch, int64_t len, uint64_t seed) {
        if (vocab < 2 || batch < 1 || len < 2 || batch * len > (int64_t{1} << 30)) {
          throw UsageError("random tokens: allowed: vocab >= 2, batch >= 1, length >= 2");
        }
        Rng rng(seed);
        const Batch b = random_next_token_batch(vocab, batch, len, rng);
        py::array_t<int32_t> tokens({batch, len}), targets({batch, len});
        std::copy(b.tokens.begin(), b.tokens.end(), tokens.mutable_data());
        for (int64_t n = 0; n < batch * len; ++n) {
          targets.mutable_data()[n] = b.weight[n] == 0.0f ? kNoToken : b.target(n).most_likely();
        }
        return py::make_tuple(tokens, targets);
      },
      py::arg("vocab"), py::arg("batch"), py::arg("length"), py::arg("seed"));
  // tokens (B, T) or (B, T, F) int32, targets (B, T, V) float32 (zeros where unscored),
  // weight (B, T) float32; the same sequences `normlab run` trains on for the same seed.
  m.def(
      "task_generate",
      [](const std::string& name, const std::string& params_json, int64_t n, int64_t batch,
         uint64_t seed, bool validation) {
        const auto task = task_of(name, params_json);
        task->check_length(n);
        if (batch < 1 || batch > (int64_t{1} << 20)) {
          throw UsageError("batch: allowed: an integer from 1 to 1048576");
        }
        Rng rng(seed);
        const Batch b = task->make_batch(n, batch, rng, validation);
        std::vector<py::ssize_t> token_shape = {b.batch, b.len};
        if (b.fields > 1) token_shape.push_back(b.fields);
        py::array_t<int32_t> tokens(token_shape);
        std::copy(b.tokens.begin(), b.tokens.end(), tokens.mutable_data());
        py::array_t<float> targets({b.batch, b.len, static_cast<int64_t>(b.vocab)});
        const std::vector<float> dense = b.dense_target();
        std::copy(dense.begin(), dense.end(), targets.mutable_data());
        py::array_t<float> weight({b.batch, b.len});
        std::copy(b.weight.begin(), b.weight.end(), weight.mutable_data());
        return py::make_tuple(tokens, targets, weight);
      },
      py::arg("name"), py::arg("params_json"), py::arg("n"), py::arg("batch"), py::arg("seed"),
      py::arg("validation"));
}

}  // namespace normlab::python
