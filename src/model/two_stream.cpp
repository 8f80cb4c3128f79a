// Two residual streams (docs/schemes.md, "Two streams"; ResidualMode::two_stream). x is the
// stream the sublayer slots update; y starts as the embedding stream too and gathers every
// branch output z unscaled. Per sublayer, with the scheme's TwoStreamRule:
//   x̂ = N_x(x)                   (renorm_x; else x̂ = x)
//   v = x̂ + N_y(y)               (input_reads_y; else v = x̂)
//   z = N_out(f(s · N_in(v)))     the sublayer's branch (sublayer_forward.cpp)
//   x ← N_post(a ⊙ x̂ + b ⊙ z),   y ← y + z
// and the output before the final norm is h = N_x(x) + N_y(y) (merge_norm_x) or x + N_y(y).
// resiDual (arXiv 2304.14802) is post's slots with no rule flag; SiameseNorm (arXiv
// 2602.08064) is pre's slots with b = 1/sqrt(2(l+1)) and every flag.
// The forward pieces serve training and inference; the backward pieces the training pass.
//
// Letters: N = B·T rows, D width, S sublayers.
#include "model/two_stream.hpp"

#include <algorithm>

#include "core/kernels/norm.hpp"
#include "model/buffers.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/residual_add.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/model.hpp"

namespace normlab {

template <typename T>
TwoStreamInput<T> Model<T>::two_stream_input(int i, const T* x, const T* y,
                                             const TwoStreamBuffers<T>& b, int64_t rows) const {
  const TwoStreamRule& rule = scheme_.two_stream;
  const SublayerParams& p = sublayers_[i];
  const int D = config_.width;
  TwoStreamInput<T> in{x, x};
  if (rule.renorm_x) {
    norm_forward(norm_weights(params_, p.x_norm), x, b.xhat, {b.x_mean, b.x_rstd}, {rows, D},
                 config_.norm_eps);
    in.xhat = in.v = b.xhat;
  }
  if (rule.input_reads_y) {
    norm_forward(norm_weights(params_, p.y_norm), y, b.yhat, {b.y_mean, b.y_rstd}, {rows, D},
                 config_.norm_eps);
    residual_add(in.xhat, static_cast<const T*>(b.yhat), b.v, rows, D);
    in.v = b.v;
  }
  return in;
}

template <typename T>
void Model<T>::two_stream_merge(const T* x, const T* y, const TwoStreamBuffers<T>& b, T* h,
                                int64_t rows) const {
  const int D = config_.width;
  const T* xs = x;
  if (scheme_.two_stream.merge_norm_x) {
    norm_forward(norm_weights(params_, merge_x_norm_), x, b.xhat, {b.x_mean, b.x_rstd}, {rows, D},
                 config_.norm_eps);
    xs = b.xhat;
  }
  norm_forward(norm_weights(params_, merge_y_norm_), y, b.yhat, {b.y_mean, b.y_rstd}, {rows, D},
               config_.norm_eps);
  residual_add(xs, static_cast<const T*>(b.yhat), h, rows, D);
}

template <typename T>
void Model<T>::size_two_streams(int64_t N) {
  Workspace& w = *ws_;
  const TwoStreamRule& rule = scheme_.two_stream;
  const int S = num_sublayers();
  const int64_t D = config_.width;
  w.y_stream.resize(S + 1);
  for (auto& y : w.y_stream) grow(y, N * D);
  w.two.resize(S + 1);
  for (int i = 0; i <= S; ++i) {
    auto& s = w.two[i];
    const bool merge = i == S;
    if (merge ? rule.merge_norm_x : rule.renorm_x) {
      grow(s.xhat, N * D);
      grow(s.x_mean, N);
      grow(s.x_rstd, N);
    }
    if (merge || rule.input_reads_y) {
      grow(s.yhat, N * D);
      grow(s.y_mean, N);
      grow(s.y_rstd, N);
      grow(s.v, N * D);
    }
  }
  for (auto* v : {&w.d_y_stream, &w.d_v, &w.d_xhat}) grow(*v, N * D);
}

template <typename T>
TwoStreamBuffers<T> Model<T>::two_stream_buffers(int i) {
  auto& s = ws_->two.at(i);
  return {.xhat = data_or_null(s.xhat),
          .x_mean = data_or_null(s.x_mean),
          .x_rstd = data_or_null(s.x_rstd),
          .yhat = data_or_null(s.yhat),
          .y_mean = data_or_null(s.y_mean),
          .y_rstd = data_or_null(s.y_rstd),
          .v = data_or_null(s.v)};
}

template <typename T>
const T* Model<T>::residual_input(int i) const {
  return scheme_.two_stream.renorm_x ? ws_->two.at(i).xhat.data() : ws_->stream.at(i).data();
}

template <typename T>
void Model<T>::two_stream_merge_backward(T* dh, T* scratch) {
  Workspace& w = *ws_;
  const int S = num_sublayers();
  const int64_t N = w.batch * w.len;
  const int D = config_.width;
  const auto& m = w.two[S];
  // h = x' + N_y(y_S): dL/dy_S = N_y'(dh).
  std::fill(w.d_y_stream.data(), w.d_y_stream.data() + N * D, T(0));
  norm_backward(norm_weights(params_, merge_y_norm_), w.y_stream[S].data(),
                {m.y_mean.data(), m.y_rstd.data()}, dh, w.d_y_stream.data(),
                norm_grads(grads_, merge_y_norm_), {N, D});
  if (!scheme_.two_stream.merge_norm_x) return;  // x' = x_S: dL/dx_S = dh
  std::fill(scratch, scratch + N * D, T(0));
  norm_backward(norm_weights(params_, merge_x_norm_), w.stream[S].data(),
                {m.x_mean.data(), m.x_rstd.data()}, dh, scratch, norm_grads(grads_, merge_x_norm_),
                {N, D});
  std::copy(scratch, scratch + N * D, dh);
}

template <typename T>
BranchGradient<T> Model<T>::two_stream_update_backward(int i, const T* d_out, T* d_in) {
  Workspace& w = *ws_;
  const TwoStreamRule& rule = scheme_.two_stream;
  const int64_t N = w.batch * w.len;
  const int D = config_.width;
  // dL/dx̂: d_in itself when x̂ = x.
  T* d_xhat = rule.renorm_x ? w.d_xhat.data() : d_in;
  T* d_v = nullptr;
  if (rule.input_reads_y) {
    d_v = w.d_v.data();
    std::fill(d_v, d_v + N * D, T(0));
  }
  T* dz = add_backward(i, residual_input(i), d_out, d_xhat, true);
  // y_{i+1} = y_i + z: dL/dz gains dL/dy_{i+1}, and dL/dy_i starts as dL/dy_{i+1} (as it is).
  const T* dy = w.d_y_stream.data();
  for_row_shards(N, [&](int64_t, int64_t n0, int64_t n1) {
    for (int64_t k = n0 * D; k < n1 * D; ++k) dz[k] += dy[k];
  });
  return {.v = ws_->subs.at(i).input, .dz = dz, .d_v = d_v != nullptr ? d_v : d_xhat};
}

template <typename T>
void Model<T>::two_stream_input_backward(int i, T* d_in) {
  Workspace& w = *ws_;
  const TwoStreamRule& rule = scheme_.two_stream;
  const SublayerParams& p = sublayers_[i];
  const auto& s = w.two[i];
  const int64_t N = w.batch * w.len;
  const int D = config_.width;
  T* d_xhat = rule.renorm_x ? w.d_xhat.data() : d_in;
  if (rule.input_reads_y) {
    // v = x̂ + N_y(y_i).
    const T* d_v = w.d_v.data();
    for_row_shards(N, [&](int64_t, int64_t n0, int64_t n1) {
      for (int64_t k = n0 * D; k < n1 * D; ++k) d_xhat[k] += d_v[k];
    });
    norm_backward(norm_weights(params_, p.y_norm), w.y_stream[i].data(),
                  {s.y_mean.data(), s.y_rstd.data()}, d_v, w.d_y_stream.data(),
                  norm_grads(grads_, p.y_norm), {N, D});
  }
  if (rule.renorm_x) {
    // x̂ = N_x(x_i).
    std::fill(d_in, d_in + N * D, T(0));
    norm_backward(norm_weights(params_, p.x_norm), w.stream[i].data(),
                  {s.x_mean.data(), s.x_rstd.data()}, d_xhat, d_in, norm_grads(grads_, p.x_norm),
                  {N, D});
  }
}

// This file's members for both scalar types (the class itself is instantiated in model.cpp).
template TwoStreamInput<float> Model<float>::two_stream_input(int, const float*, const float*,
                                                              const TwoStreamBuffers<float>&,
                                                              int64_t) const;
template TwoStreamInput<double> Model<double>::two_stream_input(int, const double*, const double*,
                                                                const TwoStreamBuffers<double>&,
                                                                int64_t) const;
template void Model<float>::two_stream_merge(const float*, const float*,
                                             const TwoStreamBuffers<float>&, float*, int64_t) const;
template void Model<double>::two_stream_merge(const double*, const double*,
                                              const TwoStreamBuffers<double>&, double*,
                                              int64_t) const;
template void Model<float>::size_two_streams(int64_t);
template void Model<double>::size_two_streams(int64_t);
template TwoStreamBuffers<float> Model<float>::two_stream_buffers(int);
template TwoStreamBuffers<double> Model<double>::two_stream_buffers(int);
template const float* Model<float>::residual_input(int) const;
template const double* Model<double>::residual_input(int) const;
template void Model<float>::two_stream_merge_backward(float*, float*);
template void Model<double>::two_stream_merge_backward(double*, double*);
template BranchGradient<float> Model<float>::two_stream_update_backward(int, const float*, float*);
template BranchGradient<double> Model<double>::two_stream_update_backward(int, const double*,
                                                                          double*);
template void Model<float>::two_stream_input_backward(int, float*);
template void Model<double>::two_stream_input_backward(int, double*);

}  // namespace normlab
