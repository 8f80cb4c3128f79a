#include "token_arrays.hpp"

#include <fmt/format.h>

#include "normlab/errors.hpp"

namespace py = pybind11;

namespace normlab::python {

TokenBatch token_batch(const py::array& tokens, int model_fields) {
  if (tokens.dtype().kind() != 'i' && tokens.dtype().kind() != 'u') {
    throw InputError(
        fmt::format("tokens: dtype {} is not an integer type; allowed: an integer "
                    "array of shape (T,), (B, T) or (B, T, F)",
                    std::string(py::str(tokens.dtype()))));
  }
  const int nd = static_cast<int>(tokens.ndim());
  if (nd < 1 || nd > 3) {
    throw InputError(fmt::format(
        "tokens: {} dimensions; allowed: an integer array of shape (T,), (B, T) or (B, T, F)", nd));
  }
  TokenBatch b;
  b.had_batch_axis = nd >= 2;
  b.batch = nd >= 2 ? tokens.shape(0) : 1;
  b.len = nd >= 2 ? tokens.shape(1) : tokens.shape(0);
  b.fields = nd == 3 ? static_cast<int>(tokens.shape(2)) : 1;
  if (b.batch < 1 || b.len < 1) throw InputError("tokens: the array is empty");
  if (b.fields != model_fields && !(nd < 3 && model_fields == 1)) {
    throw InputError(
        fmt::format("tokens: {} fields per position, the task needs {}", b.fields, model_fields));
  }
  // Cast to int64 first (any integer dtype, any strides), then narrow with a range check.
  const auto wide = py::array_t<int64_t, py::array::c_style | py::array::forcecast>(tokens);
  const int64_t* p = wide.data();
  b.ids.resize(static_cast<size_t>(wide.size()));
  for (size_t i = 0; i < b.ids.size(); ++i) {
    if (p[i] < INT32_MIN || p[i] > INT32_MAX) {
      throw InputError(fmt::format("tokens: value {} at flat index {} is out of range", p[i], i));
    }
    b.ids[i] = static_cast<int32_t>(p[i]);
  }
  return b;
}

}  // namespace normlab::python
