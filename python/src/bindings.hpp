// The pieces of the compiled module _normlab (docs/python.md); module.cpp puts them together.
#pragma once

#include <pybind11/pybind11.h>

namespace normlab::python {

void add_model_bindings(pybind11::module_& m);
void add_task_bindings(pybind11::module_& m);
void add_train_bindings(pybind11::module_& m);

}  // namespace normlab::python
