// Small helpers of the model's buffers: sizing a workspace vector and reading a parameter
// offset that may be absent.
#pragma once

#include <cstdint>
#include <vector>

namespace normlab {

// v becomes n zeros unless it already holds n values (then it is left as it is).
template <typename T>
void resize(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) != n) v.assign(n, T(0));
}

// v grows to at least n values and never shrinks (buffers sized for the largest call seen).
template <typename T>
void grow(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(n);
}

// The tensor at `offset` of a flat parameter (or gradient) buffer; null for offset −1.
template <typename T>
const T* param_ptr(const std::vector<T>& p, int64_t offset) {
  return offset < 0 ? nullptr : p.data() + offset;
}

template <typename T>
T* param_ptr(std::vector<T>& p, int64_t offset) {
  return offset < 0 ? nullptr : p.data() + offset;
}

}  // namespace normlab
