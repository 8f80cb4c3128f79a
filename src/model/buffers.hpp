// Small helpers of the model's buffers: sizing a workspace vector and reading a parameter
// offset that may be absent.
#pragma once

#include <cstdint>
#include <vector>

namespace normlab {

// v holds n values: those it held (up to n) and zeros after them. Nothing may rely on the
// values of a workspace buffer before writing them: a training step of the same shape finds the
// previous step's, and with lengths drawn per batch the shape changes almost every step, where
// zeroing every buffer (as this did until 2026-11-25) cost ~4% of a small model's step.
template <typename T>
void resize(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) != n) v.resize(n);
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
