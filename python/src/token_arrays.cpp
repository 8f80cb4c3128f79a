#include "token_arrays.hpp"

#include <fmt/format.h>

#include <utility>

#include "normlab/base/errors.hpp"

namespace py = pybind11;

namespace normlab::python {
namespace {

// The values as int32, each checked to fit.
template <typename Wide>
void narrow(const std::vector<Wide>& values, std::vector<int32_t>& ids) {
  ids.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::in_range<int32_t>(values[i])) {
      throw InputError(
          fmt::format("tokens: value {} at flat index {} is out of range", values[i], i));
    }
    ids[i] = static_cast<int32_t>(values[i]);
  }
}

}  // namespace

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
  // Widened first (any integer dtype, any strides), then narrowed with a range check. Unsigned
  // values widen to uint64: through int64, 2^64 − 1 would become −1, the empty field.
  if (tokens.dtype().kind() == 'u') {
    narrow(c_order_values<uint64_t>(tokens), b.ids);
  } else {
    narrow(c_order_values<int64_t>(tokens), b.ids);
  }
  return b;
}

}  // namespace normlab::python
