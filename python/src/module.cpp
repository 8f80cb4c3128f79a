// _normlab: the compiled half of the Python package (docs/python.md). normlab's one-line errors
// become Python exceptions with the same text: InputError and UsageError are ValueError.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/core/machine.hpp"
#include "normlab/core/threads.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_normlab, m) {
  m.doc() = "normlab's C++ engine; use the package `normlab`, not this module";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const normlab::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const normlab::UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("set_threads", &normlab::set_num_threads, py::arg("n"),
        "Threads used by every kernel (1 by default); results are bit-identical at any count.");
  m.def(
      "machine",
      [] {
        const normlab::MachineInfo info = normlab::machine_info();
        py::dict d;
        d["cpu"] = info.cpu;
        d["family"] = info.family;
        d["model"] = info.model;
        d["avx2_fma"] = info.avx2_fma;
        d["avx512"] = info.avx512;
        d["build_arch"] = info.build_arch;
        d["products"] = info.products;
        d["openblas"] = info.openblas;
        d["openblas_core"] = info.openblas_core;
        return d;
      },
      "The CPU and the kernels normlab uses on it (as `normlab --version` prints them).");
  normlab::python::add_model_bindings(m);
  normlab::python::add_task_bindings(m);
  normlab::python::add_train_bindings(m);
}
