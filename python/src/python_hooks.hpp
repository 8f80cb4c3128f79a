// Python functions as the model's forward hooks (include/normlab/model/activation_hooks.hpp):
// `dispatch`, a normlab._hooks.Dispatch, says which names it wants and is called with each
// offered activation as a float32 array (a copy); what it returns (None: the array, changed in
// place or not) is what the forward continues from, when it differs bitwise.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <pybind11/pybind11.h>

#include "normlab/model/activation_hooks.hpp"

namespace normlab::python {

class PythonHooks : public ActivationHooks<float> {
 public:
  explicit PythonHooks(pybind11::object dispatch) : dispatch_(std::move(dispatch)) {}
  // The GIL is taken for each call: the forward runs with it released.
  bool wants(const std::string& name) override;
  bool visit(const std::string& name, float* values, const std::vector<int64_t>& shape) override;

 private:
  pybind11::object dispatch_;
  std::unordered_map<std::string, bool> wanted_;  // dispatch.wants, asked once per name
};

}  // namespace normlab::python
