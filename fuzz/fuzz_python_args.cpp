// libFuzzer harness: the Python API's arguments (docs/python.md). The compiled module _normlab
// (python/src) is linked in and imported by an embedded interpreter with numpy; each input
// builds numpy arrays of a fuzz-chosen dtype, shape, memory layout and bytes and passes them to
// Model.forward, run_with_hooks or grads of small models, through the same pybind11 binding
// code as `import normlab`: token_batch (python/src/token_arrays.cpp), the bindings' checks of
// targets and weights, and the model's check of token values.
//
// Input (FuzzedDataProvider): the method and model, then per array its dtype (one of
// kDtypes), rank 0..4, each extent 0..20, layout (make_array below) and its bytes.
//
// Expected: a normlab InputError or UsageError (a ValueError in Python), or a result whose
// shape is the documented one; and every token and integer target the call accepted is in
// [-1, V) as the integer the caller wrote (-1: an empty field, or an unscored target). Any
// other exception (C++ or Python), crash or sanitizer report is a bug. Leaks are not checked
// for this harness: the embedded interpreter and numpy keep allocations until exit
// (fuzz/fuzz.cmake).
#include <fuzzer/FuzzedDataProvider.h>
#include <pybind11/embed.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_refusal.hpp"
#include "normlab/base/errors.hpp"

namespace py = pybind11;

extern "C" PyObject* PyInit__normlab();  // python/src/module.cpp

namespace {

// Builds an array from raw bytes: layout 0 C order, 1 Fortran order, 2 every other element of
// a larger array, 3 the last axis reversed, 4 broadcast along the first axis (stride 0), 5 at
// an odd address (unaligned), 6 first and last axes swapped.
constexpr const char* kHelpers = R"(
import numpy as np

def make_array(dtype, shape, layout, raw):
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    def values(count, offset=0):
        need = count * dt.itemsize + offset
        buf = (raw * (need // max(len(raw), 1) + 1))[:need] if raw else bytes(need)
        return np.frombuffer(buf, dtype=dt, count=count, offset=offset)
    if len(shape) == 0:
        return values(1).reshape(()).copy()
    if layout == 1:
        return np.asfortranarray(values(n).reshape(shape))
    if layout == 2:
        return values(2 * n).reshape((2 * shape[0],) + tuple(shape[1:]))[::2]
    if layout == 3:
        return values(n).reshape(shape).copy()[..., ::-1]
    if layout == 4:
        return np.broadcast_to(values(n // shape[0] if shape[0] else 0).reshape((1 if shape[0] else 0,) + tuple(shape[1:])), shape)
    if layout == 5:
        return values(n, offset=1).reshape(shape)
    if layout == 6:
        return values(n).reshape(shape).copy().swapaxes(0, -1)
    return values(n).reshape(shape).copy()

class EveryHook:
    """run_with_hooks' dispatch (normlab._hooks.Dispatch's interface): every name wanted, each
    activation handed back unchanged."""
    def wants(self, name):
        return True
    def __call__(self, name, value):
        return value

def accepted_in_range(a, vocab):
    return all(-1 <= int(x) < vocab for x in np.asarray(a).flat)
)";

constexpr const char* kDtypes[] = {"i1",  "<i2", "<i4", ">i4", "<i8", ">i8", "u1",  "<u2",
                                   "<u4", "<u8", ">u8", "?",   "<f2", "<f4", "<f8", "<c8"};

// Two small models: a causal pre-norm one with learned positions (max_len 8) and an ngpt one
// without positions.
constexpr const char* kModels[] = {
    R"({"scheme": "pre", "vocab": 5, "width": 4, "heads": 2, "layers": 1, "mlp": true,
        "mlp_mult": 2, "pos": "learned", "max_len": 8})",
    R"({"scheme": "ngpt", "norm": "l2", "vocab": 7, "width": 4, "heads": 1, "layers": 2,
        "mlp": false, "pos": "none", "max_len": 64})"};
constexpr int kVocab[] = {5, 7};

struct Python {
  py::module_ core;
  py::object make_array, accepted_in_range, every_hook;
  std::vector<py::object> models;

  Python() {
    PyImport_AppendInittab("_normlab", &PyInit__normlab);
    py::initialize_interpreter();  // never finalized: the process ends with the fuzzer
    core = py::module_::import("_normlab");
    py::dict scope;
    py::exec(kHelpers, scope);
    make_array = scope["make_array"];
    accepted_in_range = scope["accepted_in_range"];
    every_hook = scope["EveryHook"]();
    const py::object json = py::module_::import("json");
    for (const char* overrides : kModels) {
      py::dict config = json.attr("loads")(
          core.attr("default_config_json")(json.attr("loads")(overrides)["scheme"]));
      config.attr("update")(json.attr("loads")(overrides));
      models.push_back(core.attr("Model").attr("from_config")(json.attr("dumps")(config), 1));
    }
  }
};

Python& python() {
  static Python* p = new Python();  // kept until exit, like the interpreter
  return *p;
}

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "fuzz_python_args: %s\n", what.c_str());
  std::abort();
}

py::object fuzzed_array(FuzzedDataProvider& in) {
  const char* dtype = in.PickValueInArray(kDtypes);
  std::vector<int64_t> shape(in.ConsumeIntegralInRange<size_t>(0, 4));
  for (int64_t& extent : shape) extent = in.ConsumeIntegralInRange<int64_t>(0, 20);
  const int layout = in.ConsumeIntegralInRange<int>(0, 6);
  const std::string raw = in.ConsumeBytesAsString(in.ConsumeIntegralInRange<size_t>(0, 256));
  return python().make_array(dtype, py::tuple(py::cast(shape)), layout, py::bytes(raw));
}

// The shape forward's logits must have: (B, T, V), or (T, V) for tokens of rank 1.
void check_logits(const py::array& tokens, const py::array& logits, int vocab) {
  const bool batched = tokens.ndim() >= 2;
  const py::ssize_t rank = batched ? 3 : 2;
  bool ok = logits.ndim() == rank && logits.shape(rank - 1) == vocab;
  ok = ok && (batched ? logits.shape(0) == tokens.shape(0) && logits.shape(1) == tokens.shape(1)
                      : logits.shape(0) == tokens.shape(0));
  if (!ok) bug("logits of the wrong shape");
}

void check_accepted(const py::object& ints, int vocab, const char* what) {
  if (!python().accepted_in_range(ints, vocab).cast<bool>()) {
    bug(std::string(what) + " outside [-1, V) accepted: " + std::string(py::repr(ints)) +
        " dtype " + std::string(py::str(ints.attr("dtype"))));
  }
}

void call(FuzzedDataProvider& in) {
  const int m = in.ConsumeIntegralInRange<int>(0, 1);
  const int method = in.ConsumeIntegralInRange<int>(0, 2);
  py::object model = python().models[m];
  const py::object tokens = fuzzed_array(in);
  if (method == 0) {
    check_logits(tokens, model.attr("forward")(tokens), kVocab[m]);
  } else if (method == 1) {
    check_logits(tokens, model.attr("run_with_hooks")(tokens, python().every_hook), kVocab[m]);
  } else {
    const py::object targets = fuzzed_array(in);
    const py::object weight = in.ConsumeBool() ? fuzzed_array(in) : py::none();
    model.attr("grads")(tokens, targets, weight);
    if (py::str(targets.attr("dtype").attr("kind")).cast<std::string>() != "f") {
      check_accepted(targets, kVocab[m], "an integer target");
    }
  }
  check_accepted(tokens, kVocab[m], "a token");
}

// A C++ exception that reaches pybind11 from the module: normlab's two error types go on to
// the module's translator (ValueError) and are the expected answer; pybind11's own and Python
// errors pass through; anything else is a bug.
bool normlab_error = false;

void translate(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const normlab::InputError&) {
    normlab_error = true;
    throw;
  } catch (const normlab::UsageError&) {
    normlab_error = true;
    throw;
  } catch (const py::error_already_set&) {
    throw;
  } catch (const py::builtin_exception&) {
    throw;
  } catch (const std::exception& e) {
    bug(std::string("a C++ exception that is not normlab's: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool translator = (python(), py::register_exception_translator(translate), true);
  (void)translator;
  FuzzedDataProvider in(data, size);
  normlab_error = false;
  try {
    call(in);
  } catch (const py::error_already_set& e) {
    if (!(normlab_error && e.matches(PyExc_ValueError))) {
      bug(std::string("a Python error that is not normlab's: ") + e.what());
    }
    normlab::fuzz::refused(e);
  }
  return 0;
}
