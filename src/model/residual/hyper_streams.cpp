// Hyper-connections and mHC (docs/schemes.md, "Hyper-connections"): n streams H (N, n, D) per
// token; sublayer i's weights mix them into its input h = Σ_s A_m[s] H_s, and its branch output
// z enters them as H'_j = B[j] z + Σ_s A_r[s][j] H_s; the output is Σ_j H_j
// (src/model/hyper_conn.cpp).
//
// Letters: N rows, D width, S sublayers, n streams.
#include <algorithm>
#include <utility>

#include "core/parallel.hpp"
#include "model/hyper_conn.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/workspace.hpp"
#include "normlab/model.hpp"

namespace normlab {

template <typename T>
class HyperStreams final : public ResidualStream<T> {
 public:
  explicit HyperStreams(Model<T>& model) : m_(model) {}

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

 private:
  typename Model<T>::Workspace& ws() { return *m_.ws_; }
  int width() const { return m_.config_.width; }

  Model<T>& m_;
  T *dH_ = nullptr, *dH_next_ = nullptr;  // dL/dH_{i+1}, dL/dH_i (N, n, D)
};

template <typename T>
std::unique_ptr<ResidualStream<T>> make_hyper_streams(Model<T>& model) {
  return std::make_unique<HyperStreams<T>>(model);
}

template std::unique_ptr<ResidualStream<float>> make_hyper_streams(Model<float>&);
template std::unique_ptr<ResidualStream<double>> make_hyper_streams(Model<double>&);

}  // namespace normlab
