// A residual mode of the training pass (docs/schemes.md, "Residual modes"): how each sublayer's
// input is formed from the stream(s) and how its branch output z enters them. One class per
// ResidualMode, each in its own file of this folder, chosen once by the model
// (make_residual_stream); the model's forward and backward are then one list of steps whatever
// the mode (model.cpp, model_backward.cpp):
//
//   layout    lay_out_input(i) before each sublayer's branch tensors, lay_out_output() after the
//             last sublayer's (once, in the model's constructor)
//   buffers   declare_buffers(arena, N) whenever the batch's shape changes (arena.hpp)
//   forward   e → embedding(); begin(); for i: x = input(i); z = branch(x); update(i, z);
//             h = end()
//   backward  dL/dh → d_end(); end_backward(); for i from the last:
//             g = update_backward(i); branch_backward(g); input_backward(i);
//             dL/de = begin_backward()
//
// Letters: N = B·T rows, D width, S sublayers.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "model/arena.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

// What a sublayer's branch backward reads and where it writes: v (N, D) the branch's input,
// dz (N, D) dL/dz, and d_v (N, D), which dL/dv is added into.
template <typename T>
struct BranchGradient {
  const T* v;
  const T* dz;
  T* d_v;
};

template <typename T>
class ResidualStream {
 public:
  virtual ~ResidualStream() = default;

  // The mode's parameters of sublayer i (names under `prefix`, offsets into p), laid out before
  // its branch's; and those of the output, after the last sublayer's.
  virtual void lay_out_input(int i, const std::string& prefix, SublayerParams& p) {}
  virtual void lay_out_output() {}

  // Declares the mode's buffers for N rows into the training arena (with the model's, once per
  // batch shape); they are carved after every declaration.
  virtual void declare_buffers(Arena<T>& arena, int64_t N) = 0;

  // Forward over N rows.
  virtual T* embedding() = 0;                             // (N, D) where the model writes e
  virtual void begin(int64_t N) = 0;                      // the stream(s) start from e
  virtual const T* input(int i, int64_t N) = 0;           // (N, D) what sublayer i's f reads
  virtual void update(int i, const T* z, int64_t N) = 0;  // z (N, D) its branch output
  virtual const T* end(int64_t N) = 0;  // (N, D) the stream entering the final norm

  // Backward of the last forward.
  virtual T* d_end() = 0;  // (N, D) where the model writes dL/dh
  virtual void end_backward() = 0;
  virtual BranchGradient<T> update_backward(int i) = 0;
  virtual void input_backward(int i) = 0;  // after the branch's backward of i
  virtual const T* begin_backward() = 0;   // (N, D) dL/de

  // What the last forward left (the model's accessors, model.hpp); a mode without them throws.
  virtual const T* res_weights(int l) const { throw no("res_weights", "AttnRes"); }
  virtual const T* res_source(int j) const { throw no("res_source", "AttnRes"); }
  virtual const T* res_source_rstd(int j) const { throw no("res_source_rstd", "AttnRes"); }
  virtual int64_t res_query_offset(int l) const { throw no("res_query_offset", "AttnRes"); }
  virtual int64_t res_gain_offset(int l) const { throw no("res_gain_offset", "AttnRes"); }
  virtual const T* hyper_mix(int i) const { throw no("hyper_mix", "hyper-connections"); }

 private:
  static std::logic_error no(const std::string& accessor, const std::string& mode) {
    return std::logic_error(accessor + ": the scheme has no " + mode);
  }
};

// The stream of the model's scheme (its ResidualMode; make_residual_stream.cpp), and each mode's
// (additive.cpp, attnres_stream.cpp, two_streams.cpp, hyper_streams.cpp).
template <typename T>
std::unique_ptr<ResidualStream<T>> make_residual_stream(Model<T>& model);
template <typename T>
std::unique_ptr<ResidualStream<T>> make_additive_stream(Model<T>& model);
template <typename T>
std::unique_ptr<ResidualStream<T>> make_attnres_stream(Model<T>& model);
template <typename T>
std::unique_ptr<ResidualStream<T>> make_two_streams(Model<T>& model);
template <typename T>
std::unique_ptr<ResidualStream<T>> make_hyper_streams(Model<T>& model);

}  // namespace normlab
