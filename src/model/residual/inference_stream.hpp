// A residual mode of the inference pass (Model::forward_rows): the forward of its training
// stream (residual_stream.hpp) over one set of buffers that every sublayer reuses, nothing kept
// for a backward, and from the last attention sublayer on only the R listed rows:
//
//   buffers   declare_buffers(arena, N, R) on every call (arena.hpp)
//   forward   e → embedding(); begin(N); for i: v = input(i, rows); z = branch(v);
//             [the last attention: keep_rows(rows)]; out = update(i, z, rows); h = end(R)
//
// Letters: N = B·T rows, R listed rows, D width, S sublayers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/arena.hpp"

namespace normlab {

template <typename T>
class Model;

template <typename T>
class InferenceStream {
 public:
  virtual ~InferenceStream() = default;

  // Declares the mode's buffers for N rows, R of them listed, into the inference arena.
  virtual void declare_buffers(Arena<T>& arena, int64_t N, int64_t R) = 0;

  virtual T* embedding() = 0;                       // (N, D) where the model writes e
  virtual void begin(int64_t N) = 0;                // the stream(s) start from e
  virtual const T* input(int i, int64_t rows) = 0;  // (rows, D) what sublayer i's f reads
  virtual const T* residual_input() const = 0;      // (rows, D) the stream sublayer i reads
                                                    // (its trace's input); R rows once kept
  // After the last attention's branch, which computed the listed rows only: the stream(s)
  // keep those rows, ascending indices in [0, N).
  virtual void keep_rows(int i, const std::vector<int64_t>& rows) = 0;
  // z (rows, D) enters the stream(s); returns what sublayer i leaves (rows, D): the stream, or
  // under AttnRes its record.
  virtual const T* update(int i, const T* z, int64_t rows) = 0;
  virtual const T* end(int64_t rows) = 0;  // (rows, D) the stream entering the final norm
};

// Rows `rows` of a (·, width) buffer copied to the first rows of out (R, width). out may be in:
// the rows ascend, so row rows[k] ≥ k is read before it could be overwritten.
template <typename T>
void keep_listed_rows(const T* in, const std::vector<int64_t>& rows, int64_t width, T* out) {
  for (size_t k = 0; k < rows.size(); ++k) {
    std::copy(in + rows[k] * width, in + (rows[k] + 1) * width, out + k * width);
  }
}

// The inference stream of the model's scheme (make_residual_stream.cpp), and each mode's, in
// the file of its training stream.
template <typename T>
std::unique_ptr<InferenceStream<T>> make_inference_stream(Model<T>& model);
template <typename T>
std::unique_ptr<InferenceStream<T>> make_additive_inference(Model<T>& model);
template <typename T>
std::unique_ptr<InferenceStream<T>> make_attnres_inference(Model<T>& model);
template <typename T>
std::unique_ptr<InferenceStream<T>> make_two_streams_inference(Model<T>& model);
template <typename T>
std::unique_ptr<InferenceStream<T>> make_hyper_inference(Model<T>& model);

}  // namespace normlab
