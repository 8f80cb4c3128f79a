// Python functions as forward hooks (activation_hooks.hpp).
#include "python_hooks.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/numpy.h>

#include "normlab/base/errors.hpp"

namespace py = pybind11;

namespace normlab::python {

bool PythonHooks::wants(const std::string& name) {
  if (auto it = wanted_.find(name); it != wanted_.end()) return it->second;
  py::gil_scoped_acquire gil;
  const bool wanted = dispatch_.attr("wants")(name).cast<bool>();
  wanted_.emplace(name, wanted);
  return wanted;
}

bool PythonHooks::visit(const std::string& name, float* values, const std::vector<int64_t>& shape) {
  py::gil_scoped_acquire gil;
  const std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  py::array_t<float, py::array::c_style> offered(dims);
  std::copy_n(values, offered.size(), offered.mutable_data());
  using Result = py::array_t<float, py::array::c_style | py::array::forcecast>;
  const py::object returned = dispatch_(name, offered);
  const Result result = returned.is_none() ? Result(offered) : Result(returned);
  const std::vector<py::ssize_t> got(result.shape(), result.shape() + result.ndim());
  if (got != dims) {
    throw InputError(fmt::format("hook at '{}' returned shape [{}]; allowed: the activation's [{}]",
                                 name, fmt::join(got, ", "), fmt::join(dims, ", ")));
  }
  const size_t bytes = static_cast<size_t>(result.size()) * sizeof(float);
  if (std::memcmp(result.data(), values, bytes) == 0) return false;
  std::memcpy(values, result.data(), bytes);
  return true;
}

}  // namespace normlab::python
