// Two streams (docs/schemes.md, "Two streams": resi_dual, siamesenorm): the additive stream x
// beside y ← y + z, which gathers every branch output; sublayer i's add reads x̂ = N_x(x) (or
// x) and its f reads v = x̂ + N_y(y) (or x̂); the output is N_x(x) (or x) + N_y(y)
// (Model::two_stream_input, two_stream_merge, their backward in src/model/two_stream.cpp).
//
// Letters: N rows, D width, S sublayers.
#include <algorithm>
#include <utility>

#include "core/parallel.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/residual_add.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/two_stream.hpp"
#include "model/workspace.hpp"
#include "normlab/model.hpp"

namespace normlab {

template <typename T>
class TwoStreams final : public ResidualStream<T> {
 public:
  explicit TwoStreams(Model<T>& model) : m_(model) {}

  void prepare(int64_t N) override { m_.size_two_streams(N); }
  T* embedding() override { return ws().stream[0].data(); }
  void begin(int64_t N) override {  // y_0 = x_0
    const T* x = ws().stream[0].data();
    std::copy(x, x + N * width(), ws().y_stream[0].data());
  }
  const T* input(int i, int64_t N) override {
    in_ = m_.two_stream_input(i, ws().stream[i].data(), ws().y_stream[i].data(),
                              m_.two_stream_buffers(i), N);
    return in_.v;
  }
  void update(int i, const T* z, int64_t N) override {
    auto& w = ws();
    m_.add_forward(i, in_.xhat, z, m_.train_buffers(i), w.stream[i + 1].data(), N);
    residual_add(static_cast<const T*>(w.y_stream[i].data()), z, w.y_stream[i + 1].data(), N,
                 width());  // y ← y + z
  }
  const T* end(int64_t N) override {
    const TwoStreamBuffers<T> merge = m_.two_stream_buffers(m_.num_sublayers());
    m_.two_stream_merge(ws().stream.back().data(), ws().y_stream.back().data(), merge, merge.v, N);
    return merge.v;
  }

  T* d_end() override { return ws().d_stream_a.data(); }
  void end_backward() override {  // d_cur becomes dL/dx_S, and the workspace holds dL/dy_S
    d_cur_ = ws().d_stream_a.data();
    d_next_ = ws().d_stream_b.data();
    m_.two_stream_merge_backward(d_cur_, d_next_);
  }
  BranchGradient<T> update_backward(int i) override {
    return m_.two_stream_update_backward(i, d_cur_, d_next_);
  }
  void input_backward(int i) override {
    m_.two_stream_input_backward(i, d_next_);
    std::swap(d_cur_, d_next_);  // d_cur = dL/dx_i
  }
  const T* begin_backward() override {  // x_0 = y_0 = the embedding stream
    const T* dy = ws().d_y_stream.data();
    T* d = d_cur_;
    const int D = width();
    for_row_shards(ws().batch * ws().len, [&](int64_t, int64_t n0, int64_t n1) {
      for (int64_t k = n0 * D; k < n1 * D; ++k) d[k] += dy[k];
    });
    return d_cur_;
  }

 private:
  typename Model<T>::Workspace& ws() { return *m_.ws_; }
  int width() const { return m_.config_.width; }

  Model<T>& m_;
  TwoStreamInput<T> in_{nullptr, nullptr};  // the current sublayer's x̂ and v
  T *d_cur_ = nullptr, *d_next_ = nullptr;
};

template <typename T>
std::unique_ptr<ResidualStream<T>> make_two_streams(Model<T>& model) {
  return std::make_unique<TwoStreams<T>>(model);
}

template std::unique_ptr<ResidualStream<float>> make_two_streams(Model<float>&);
template std::unique_ptr<ResidualStream<double>> make_two_streams(Model<double>&);

}  // namespace normlab
