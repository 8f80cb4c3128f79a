// Token arrays from Python: any integer numpy array of shape (T,), (B, T) or (B, T, F), checked
// and copied to int32 (B·T·F) in C order; values are checked by the model (range, kNoToken).
#pragma once

#include <cstdint>
#include <vector>

#include <pybind11/numpy.h>

namespace normlab::python {

struct TokenBatch {
  std::vector<int32_t> ids;  // (B, T, F)
  int64_t batch = 0, len = 0;
  int fields = 1;
  bool had_batch_axis = true;  // false when the caller passed (T,): outputs drop the B axis
};

// Throws ValueError (via InputError) naming the shape it got and the shapes allowed.
TokenBatch token_batch(const pybind11::array& tokens, int model_fields);

}  // namespace normlab::python
