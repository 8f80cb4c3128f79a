// Hyper-connections and mHC (docs/schemes.md, "Hyper-connections"): n streams H (N, n, D) per
// token; sublayer i's weights mix them into its input h = Σ_s A_m[s] H_s, and its branch output
// z enters them as H'_j = B[j] z + Σ_s A_r[s][j] H_s; the output is Σ_j H_j
// (src/model/hyper_conn.cpp); in training (HyperStreams) and inference (HyperInference).
//
// Letters: N rows, D width, S sublayers, n streams.
#include <algorithm>
#include <utility>

#include "core/parallel.hpp"
#include "model/buffers.hpp"
#include "model/hyper_conn.hpp"
#include "model/residual/inference_stream.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/model.hpp"

namespace normlab {

template <typename T>
class HyperStreams final : public ResidualStream<T> {
 public:
  explicit HyperStreams(Model<T>& model) : m_(model) {}

  void lay_out_input(int i, const std::string& prefix, SublayerParams& p) override {
    m_.add_hyper(prefix + ".hc", i, p.hc);
  }

  void prepare(int64_t N) override { m_.size_hyper(N); }
  T* embedding() override { return ws().stream[0].data(); }
  void begin(int64_t N) override {  // every stream starts as the embedding stream
    const int n = m_.hyper_streams(), D = width();
    const T* e = ws().stream[0].data();
    T* H = ws().hyper_H[0].data();
    for (int64_t r = 0; r < N; ++r) {
      for (int s = 0; s < n; ++s) std::copy(e + r * D, e + (r + 1) * D, H + (r * n + s) * D);
    }
  }
  const T* input(int i, int64_t N) override {  // h = Σ_s A_m[s] H_s into stream i
    const HyperBuffers<T> b = m_.hyper_buffers(i);
    const T* H = ws().hyper_H[i].data();
    m_.hyper_weights(i, H, b, N);
    m_.hyper_input(H, b.mix, ws().stream[i].data(), N);
    return ws().stream[i].data();
  }
  void update(int i, const T* z, int64_t N) override {
    m_.hyper_update(ws().hyper_H[i].data(), m_.hyper_buffers(i).mix, z, ws().hyper_H[i + 1].data(),
                    N);
  }
  const T* end(int64_t N) override {  // the stream after the last sublayer: Σ_j H_j
    m_.hyper_merge(ws().hyper_H.back().data(), ws().stream.back().data(), N);
    return ws().stream.back().data();
  }

  // Every stream's gradient starts as dL/dh; the sublayers pass it back stream by stream, and
  // the embedding, copied into every stream, gets their sum.
  T* d_end() override { return ws().d_stream_a.data(); }
  void end_backward() override {
    const int64_t N = ws().batch * ws().len;
    const int n = m_.hyper_streams(), D = width();
    const T* d = ws().d_stream_a.data();
    dH_ = ws().d_H_a.data();
    dH_next_ = ws().d_H_b.data();
    T* dH = dH_;
    for_row_shards(N, [&](int64_t, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        for (int s = 0; s < n; ++s) std::copy(d + r * D, d + (r + 1) * D, dH + (r * n + s) * D);
      }
    });
  }
  BranchGradient<T> update_backward(int i) override {
    return m_.hyper_update_backward(i, dH_, dH_next_);
  }
  void input_backward(int i) override {
    m_.hyper_input_backward(i, dH_next_);
    std::swap(dH_, dH_next_);
  }
  const T* begin_backward() override {
    const int64_t N = ws().batch * ws().len;
    const int n = m_.hyper_streams(), D = width();
    const T* dH = dH_;
    T* d = ws().d_stream_a.data();
    for_row_shards(N, [&](int64_t, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        T* out = d + r * D;
        std::copy(dH + r * n * D, dH + (r * n + 1) * D, out);
        for (int s = 1; s < n; ++s) {
          for (int k = 0; k < D; ++k) out[k] += dH[(r * n + s) * D + k];
        }
      }
    });
    return d;
  }

  const T* hyper_mix(int i) const override { return m_.ws_->hyper.at(i).mix.data(); }

 private:
  typename Model<T>::Workspace& ws() { return *m_.ws_; }
  int width() const { return m_.config_.width; }

  Model<T>& m_;
  T *dH_ = nullptr, *dH_next_ = nullptr;  // dL/dH_{i+1}, dL/dH_i (N, n, D)
};

// Inference: H and H' swapped after each sublayer; h holds the sublayer's input, then the sum
// of the streams it leaves.
template <typename T>
class HyperInference final : public InferenceStream<T> {
 public:
  explicit HyperInference(Model<T>& model) : m_(model) {}

  void prepare(int64_t N, int64_t R) override {
    auto& w = ws();
    const int n = m_.hyper_streams();
    const int64_t W = int64_t{n} * (n + 2);
    grow(w.h, N * width());
    grow(w.x_rows, R * width());
    for (auto* v : {&w.hyper_H, &w.hyper_H_next}) grow(*v, N * n * width());
    grow(w.hyper_act, N * W);
    grow(w.hyper_mix, N * W);
    if (m_.config_.sinkhorn) {
      grow(w.hyper_rms, N);
    } else {
      grow(w.hbar, N * n * width());
      grow(w.hyper_mean, N * n);
      grow(w.hyper_rstd, N * n);
    }
  }
  T* embedding() override { return ws().h.data(); }
  void begin(int64_t N) override {  // every stream starts as the embedding stream
    const int n = m_.hyper_streams(), D = width();
    const T* e = ws().h.data();
    T* H = ws().hyper_H.data();
    for (int64_t r = 0; r < N; ++r) {
      for (int s = 0; s < n; ++s) std::copy(e + r * D, e + (r + 1) * D, H + (r * n + s) * D);
    }
  }
  const T* input(int i, int64_t rows) override {  // h = Σ_s A_m[s] H_s
    auto& w = ws();
    const HyperBuffers<T> b = buffers();
    m_.hyper_weights(i, w.hyper_H.data(), b, rows);
    m_.hyper_input(w.hyper_H.data(), b.mix, w.h.data(), rows);
    x_ = w.h.data();
    return x_;
  }
  const T* residual_input() const override { return x_; }
  void keep_rows(int, const std::vector<int64_t>& rows) override {  // the streams and weights
    auto& w = ws();
    const int n = m_.hyper_streams();
    keep_listed_rows(x_, rows, width(), w.x_rows.data());
    x_ = w.x_rows.data();
    keep_listed_rows(w.hyper_H.data(), rows, int64_t{n} * width(), w.hyper_H.data());
    keep_listed_rows(w.hyper_mix.data(), rows, int64_t{n} * (n + 2), w.hyper_mix.data());
  }
  const T* update(int, const T* z, int64_t rows) override {
    auto& w = ws();
    grow(w.h_next, rows * width());
    m_.hyper_update(w.hyper_H.data(), w.hyper_mix.data(), z, w.hyper_H_next.data(), rows);
    std::swap(w.hyper_H, w.hyper_H_next);
    m_.hyper_merge(w.hyper_H.data(), w.h_next.data(), rows);
    std::swap(w.h, w.h_next);
    return w.h.data();
  }
  const T* end(int64_t) override { return ws().h.data(); }

 private:
  typename Model<T>::EvalWorkspace& ws() const { return *m_.eval_; }
  int width() const { return m_.config_.width; }
  HyperBuffers<T> buffers() const {
    auto& w = ws();
    return {.hbar = data_or_null(w.hbar),
            .mean = data_or_null(w.hyper_mean),
            .rstd = data_or_null(w.hyper_rstd),
            .act = w.hyper_act.data(),
            .rms = data_or_null(w.hyper_rms),
            .mix = w.hyper_mix.data()};
  }

  Model<T>& m_;
  const T* x_ = nullptr;  // (rows, D) the current sublayer's h
};

template <typename T>
std::unique_ptr<ResidualStream<T>> make_hyper_streams(Model<T>& model) {
  return std::make_unique<HyperStreams<T>>(model);
}
template <typename T>
std::unique_ptr<InferenceStream<T>> make_hyper_inference(Model<T>& model) {
  return std::make_unique<HyperInference<T>>(model);
}

template std::unique_ptr<ResidualStream<float>> make_hyper_streams(Model<float>&);
template std::unique_ptr<ResidualStream<double>> make_hyper_streams(Model<double>&);
template std::unique_ptr<InferenceStream<float>> make_hyper_inference(Model<float>&);
template std::unique_ptr<InferenceStream<double>> make_hyper_inference(Model<double>&);

}  // namespace normlab
