// Token arrays from Python: any integer numpy array of shape (T,), (B, T) or (B, T, F), checked
// and copied to int32 (B·T·F) in C order; values are checked by the model (range, kNoToken).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include <pybind11/numpy.h>

namespace normlab::python {

struct TokenBatch {
  std::vector<int32_t> ids;  // (B, T, F)
  int64_t batch = 0, len = 0;
  int fields = 1;
  bool had_batch_axis = true;  // false when the caller passed (T,): outputs drop the B axis
};

// The values of any numeric array as a vector of T in C order: numpy casts them (forcecast) into
// a C-ordered array, and they are copied out byte-wise, since that array may be the caller's
// own and unaligned (np.frombuffer at an odd offset), where a load of T would be undefined.
template <typename T>
std::vector<T> c_order_values(const pybind11::array& a) {
  const auto cast = pybind11::array_t<T, pybind11::array::c_style | pybind11::array::forcecast>(a);
  std::vector<T> out(static_cast<size_t>(cast.size()));
  if (!out.empty()) std::memcpy(out.data(), cast.data(), out.size() * sizeof(T));
  return out;
}

// Throws ValueError (via InputError) naming the shape it got and the shapes allowed.
TokenBatch token_batch(const pybind11::array& tokens, int model_fields);

}  // namespace normlab::python
