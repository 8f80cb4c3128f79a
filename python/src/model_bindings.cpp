// normlab.Model's compiled half: a float32 model built from a config or a checkpoint, with
// forward, forward hooks by TransformerLens-style names, gradients, and parameter views.
// Letters: B batch, T length, F fields, D width, H heads, V vocab.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "loss_batch.hpp"
#include "normlab/base/batch.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/model/model_fields.hpp"
#include "normlab/train/train_step.hpp"
#include "python_hooks.hpp"
#include "token_arrays.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace normlab::python {
namespace {

using FloatArray = py::array_t<float, py::array::c_style>;

// A copy of n floats at p as an array of `shape`.
FloatArray copy_array(const float* p, std::vector<py::ssize_t> shape) {
  FloatArray a(shape);
  std::copy(p, p + a.size(), a.mutable_data());
  return a;
}

// (B, T, X) or, when the caller passed tokens without a batch axis, (T, X).
std::vector<py::ssize_t> rows_shape(const TokenBatch& b, int64_t last) {
  if (b.had_batch_axis) return {b.batch, b.len, last};
  return {b.len, last};
}

// Every gradient hook's values, by name (activation_hooks.hpp).
struct GradientRecorder : ActivationHooks<float> {
  struct Gradient {
    std::vector<int64_t> shape;
    std::vector<float> values;
  };
  std::map<std::string, Gradient> grads;
  bool wants(const std::string&) override { return true; }
  bool visit(const std::string& name, float* values, const std::vector<int64_t>& shape) override {
    int64_t count = 1;
    for (int64_t s : shape) count *= s;
    grads[name] = {shape, std::vector<float>(values, values + count)};
    return false;
  }
};

struct PyModel {
  std::unique_ptr<Model<float>> model;

  const ModelConfig& config() const { return model->config(); }

  TokenBatch tokens_of(const py::array& tokens) const {
    // Multi-field tokens are (B, T, F); a model does not know F, so a 3-D array passes its own.
    return token_batch(tokens, tokens.ndim() == 3 ? static_cast<int>(tokens.shape(2)) : 1);
  }

  // (B, T, V) logits of a training forward (the `normlab forward` path).
  FloatArray forward(const py::array& tokens) {
    const TokenBatch b = tokens_of(tokens);
    const float* logits;
    {
      py::gil_scoped_release release;
      logits = model->forward(b.ids.data(), b.batch, b.len, b.fields);
    }
    return copy_array(logits, rows_shape(b, config().vocab));
  }

  // Logits of a training forward whose named activations go through `dispatch`, a
  // normlab._hooks.Dispatch (activation_hooks.hpp, docs/python.md "Hooks").
  FloatArray run_with_hooks(const py::array& tokens, py::object dispatch) {
    const TokenBatch b = tokens_of(tokens);
    PythonHooks hooks(std::move(dispatch));
    const float* logits;
    {
      py::gil_scoped_release release;
      model->set_forward_hooks(&hooks);
      try {
        logits = model->forward(b.ids.data(), b.batch, b.len, b.fields);
      } catch (...) {
        model->set_forward_hooks(nullptr);
        throw;
      }
      model->set_forward_hooks(nullptr);
    }
    return copy_array(logits, rows_shape(b, config().vocab));
  }

  // Loss and gradients of the loss of loss_batch (loss_batch.hpp).
  py::tuple grads(const py::array& tokens, const py::array& targets,
                  const std::optional<py::array>& weight) {
    const Batch b = loss_batch(tokens_of(tokens), targets, weight, config().vocab);
    std::vector<float> dlogits;
    double loss;
    {
      py::gil_scoped_release release;
      loss = loss_and_grads(*model, b, dlogits);
    }
    py::dict g;
    for (const TensorSpec& t : model->layout().tensors()) {
      g[py::str(t.name)] = copy_array(model->grads().data() + t.offset,
                                      std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
    }
    return py::make_tuple(loss, g);
  }

  // Loss and dL/d(every hooked activation) (docs/python.md, "Gradients"), each shaped as the
  // activation; the final norm's, which only the scored rows reach, at those rows (zero
  // elsewhere).
  py::tuple backward_with_cache(const py::array& tokens, const py::array& targets,
                                const std::optional<py::array>& weight) {
    const TokenBatch tb = tokens_of(tokens);
    const Batch b = loss_batch(tb, targets, weight, config().vocab);
    GradientRecorder recorder;
    std::vector<float> dlogits;
    double loss;
    {
      py::gil_scoped_release release;
      model->set_gradient_hooks(&recorder);
      try {
        loss = loss_and_grads(*model, b, dlogits);
      } catch (...) {
        model->set_gradient_hooks(nullptr);
        throw;
      }
      model->set_gradient_hooks(nullptr);
    }
    std::vector<int64_t> scored;  // the rows loss_and_grads lists (train_step.cpp)
    for (int64_t n = 0; n < tb.batch * tb.len; ++n) {
      if (b.target_slot[n] >= 0 && b.weight[n] != 0.0f) scored.push_back(n);
    }
    py::dict cache;
    for (const auto& [name, grad] : recorder.grads) {
      std::vector<py::ssize_t> shape(grad.shape.begin(), grad.shape.end());
      const bool listed = name.rfind("ln_final.", 0) == 0 && shape.size() >= 1 &&
                          static_cast<int64_t>(scored.size()) != tb.batch * tb.len;
      if (!listed) {
        if (!tb.had_batch_axis) shape.erase(shape.begin());
        cache[py::str(name)] = copy_array(grad.values.data(), shape);
        continue;
      }
      const int64_t width = shape.back();  // (R, width) rows back to (B, T, width)
      std::vector<float> full(tb.batch * tb.len * width, 0.0f);
      for (size_t k = 0; k < scored.size(); ++k) {
        std::copy_n(grad.values.data() + k * width, width, full.data() + scored[k] * width);
      }
      cache[py::str(name)] = copy_array(full.data(), rows_shape(tb, width));
    }
    return py::make_tuple(loss, cache);
  }
};

// Views of the parameters, writable, keeping the model alive while any view exists.
py::dict parameter_views(py::object self) {
  PyModel& m = self.cast<PyModel&>();
  py::dict views;
  for (const TensorSpec& t : m.model->layout().tensors()) {
    std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
    views[py::str(t.name)] = FloatArray(shape, m.model->params().data() + t.offset, self);
  }
  return views;
}

// A checkpoint directory (its model.safetensors), or any weight file of the format: a run's
// final/ema.safetensors and final/bema.safetensors too.
std::unique_ptr<Model<float>> load_any(const std::string& path) {
  if (!fs::is_regular_file(path)) return load_checkpoint(path);
  LoadedParams loaded = load_param_file(path);
  auto model = std::make_unique<Model<float>>(loaded.config);
  model->params() = std::move(loaded.values);
  return model;
}

// (name, type, optional) of each ModelConfig field, in model_fields.hpp's order: the twin
// checks its own field list against this.
struct FieldLister {
  std::vector<std::tuple<std::string, std::string, bool>>& out;
  void operator()(const FieldInfo& f, const int&, IntRange) {
    out.emplace_back(f.name, "int", f.optional_json);
  }
  void operator()(const FieldInfo& f, const double&, RealRange) {
    out.emplace_back(f.name, "float", f.optional_json);
  }
  void operator()(const FieldInfo& f, const bool&) {
    out.emplace_back(f.name, "bool", f.optional_json);
  }
  template <typename E>
  void operator()(const FieldInfo& f, const E&) {
    out.emplace_back(f.name, "str", f.optional_json);
  }
};

}  // namespace

void add_model_bindings(py::module_& m) {
  m.def("model_config_fields", [] {
    std::vector<std::tuple<std::string, std::string, bool>> out;
    const ModelConfig defaults;
    visit_model_fields(defaults, FieldLister{out});
    return out;
  });
  // Every field of ModelConfig at its default, with the scheme's default norm kind.
  m.def(
      "default_config_json",
      [](const std::string& scheme) {
        ModelConfig c;
        c.scheme = parse_scheme(scheme);
        c.norm = default_norm_kind(c.scheme);
        return to_json(c).dump();
      },
      py::arg("scheme"));
  m.def("scheme_names", &scheme_names);
  m.def("norm_kind_names", &norm_kind_names);
  py::class_<PyModel>(m, "Model")
      .def_static(
          "from_config",
          [](const std::string& config_json, uint64_t seed) {
            nlohmann::json j;
            try {
              j = nlohmann::json::parse(config_json);
            } catch (const nlohmann::json::exception&) {
              throw InputError("config: not valid JSON");
            }
            ModelConfig c = model_config_from_json(j);
            validate(c);
            PyModel pm;
            pm.model = std::make_unique<Model<float>>(c);
            pm.model->init(seed);
            return pm;
          },
          py::arg("config_json"), py::arg("seed"))
      .def_static(
          "load", [](const std::string& path) { return PyModel{load_any(path)}; }, py::arg("path"))
      .def(
          "save",
          [](const PyModel& self, const std::string& dir) { save_checkpoint(dir, *self.model); },
          py::arg("dir"))
      .def_property_readonly("config_json",
                             [](const PyModel& self) { return to_json(self.config()).dump(); })
      .def_property_readonly("label",
                             [](const PyModel& self) { return scheme_label(self.config()); })
      .def_property_readonly("num_params",
                             [](const PyModel& self) { return self.model->params().size(); })
      .def("forward", &PyModel::forward, py::arg("tokens"))
      .def("run_with_hooks", &PyModel::run_with_hooks, py::arg("tokens"), py::arg("dispatch"))
      .def("grads", &PyModel::grads, py::arg("tokens"), py::arg("targets"),
           py::arg("weight") = py::none())
      .def("backward_with_cache", &PyModel::backward_with_cache, py::arg("tokens"),
           py::arg("targets"), py::arg("weight") = py::none())
      .def("parameters", &parameter_views)
      // Benchmark aid (bench/python_overhead.py): seconds per forward of `tokens`, the best of
      // `repeats` timed loops of `calls` forwards each, measured inside C++.
      .def(
          "time_forward_in_cpp",
          [](PyModel& self, const py::array& tokens, int calls, int repeats) {
            const TokenBatch b = self.tokens_of(tokens);
            py::gil_scoped_release release;
            double best = 1e300;
            for (int r = 0; r < repeats; ++r) {
              const auto start = std::chrono::steady_clock::now();
              for (int i = 0; i < calls; ++i) {
                self.model->forward(b.ids.data(), b.batch, b.len, b.fields);
              }
              const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
              best = std::min(best, took.count() / calls);
            }
            return best;
          },
          py::arg("tokens"), py::arg("calls"), py::arg("repeats"));
}

}  // namespace normlab::python
