// State carried between attention sublayers inside attention, beside the residual stream
// (residual_stream.hpp), which sees only a sublayer's input and its branch output. The hook
// sees each attention sublayer's packed q|k|v (N, 3D) once it is final (after the head norms,
// RoPE and nGPT's sphere) and before attention reads it; in backward, dL/d(that q|k|v) before
// the head norms' and the projection's backward. This class is the hook that does nothing;
// each pass of the model holds its own (make_qkv_hook, make_residual_stream.cpp).
//
// Letters: N = B·T rows, D width.
#pragma once

#include <cstdint>
#include <memory>

#include "model/arena.hpp"

namespace normlab {

template <typename T>
class Model;

template <typename T>
class QkvHook {
 public:
  virtual ~QkvHook() = default;
  virtual void declare_buffers(Arena<T>& arena, int64_t N) {}  // for N rows (arena.hpp)
  virtual void forward(int i, T* qkv, int64_t N) {}     // attention sublayer i's q|k|v (N, 3D)
  virtual void backward(int i, T* d_qkv, int64_t N) {}  // its gradient (N, 3D), in place
};

// The hook of the model's scheme: value residual (value_residual.cpp), or none. `backward`:
// whether the pass runs backward (training), which needs the hook's gradient buffers.
template <typename T>
std::unique_ptr<QkvHook<T>> make_qkv_hook(const Model<T>& model, bool backward);
template <typename T>
std::unique_ptr<QkvHook<T>> make_value_residual(const Model<T>& model, bool backward);

}  // namespace normlab
