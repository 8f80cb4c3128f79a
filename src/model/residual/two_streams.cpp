// Two streams (docs/schemes.md, "Two streams": resi_dual, siamesenorm): the additive stream x
// beside y ← y + z, which gathers every branch output; sublayer i's add reads x̂ = N_x(x) (or
// x) and its f reads v = x̂ + N_y(y) (or x̂); the output is N_x(x) (or x) + N_y(y)
// (Model::two_stream_input, two_stream_merge, their backward in src/model/two_stream.cpp); in
// training (TwoStreams) and inference (TwoStreamsInference).
//
// Letters: N rows, D width, S sublayers.
#include <algorithm>
#include <utility>

#include "core/parallel.hpp"
#include "model/buffers.hpp"
#include "model/residual/inference_stream.hpp"
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

  void lay_out_input(int, const std::string& prefix, SublayerParams& p) override {
    const TwoStreamRule& rule = m_.scheme_.two_stream;
    p.x_norm = m_.add_norm(prefix + ".x_norm", rule.renorm_x, m_.config_.norm);
    p.y_norm = m_.add_norm(prefix + ".y_norm", rule.input_reads_y, m_.config_.norm);
  }
  void lay_out_output() override {  // the output N_x(x) (or x) + N_y(y)
    m_.merge_x_norm_ =
        m_.add_norm("merge.x_norm", m_.scheme_.two_stream.merge_norm_x, m_.config_.norm);
    m_.merge_y_norm_ = m_.add_norm("merge.y_norm", true, m_.config_.norm);
  }

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

// Inference: x in h (x_{i+1} into h_next, then swapped), y in place; the norms of the streams
// share one set of statistics, as nothing is kept.
template <typename T>
class TwoStreamsInference final : public InferenceStream<T> {
 public:
  explicit TwoStreamsInference(Model<T>& model) : m_(model) {}

  void prepare(int64_t N, int64_t R) override {
    auto& w = ws();
    grow(w.h, N * width());
    grow(w.x_rows, R * width());
    for (auto* v : {&w.y_stream, &w.xhat, &w.yhat, &w.v, &w.merged}) grow(*v, N * width());
  }
  T* embedding() override { return ws().h.data(); }
  void begin(int64_t N) override {  // y_0 = x_0
    const T* x = ws().h.data();
    std::copy(x, x + N * width(), ws().y_stream.data());
  }
  const T* input(int i, int64_t rows) override {
    x_ = ws().h.data();
    in_ = m_.two_stream_input(i, x_, ws().y_stream.data(), buffers(), rows);
    return in_.v;
  }
  const T* residual_input() const override { return x_; }
  void keep_rows(int, const std::vector<int64_t>& rows) override {
    auto& w = ws();
    keep_listed_rows(x_, rows, width(), w.x_rows.data());
    x_ = w.x_rows.data();
    in_.xhat = x_;
    keep_listed_rows(w.y_stream.data(), rows, width(), w.y_stream.data());
    if (m_.scheme_.two_stream.renorm_x) {
      keep_listed_rows(w.xhat.data(), rows, width(), w.xhat.data());
      in_.xhat = w.xhat.data();
    }
  }
  const T* update(int i, const T* z, int64_t rows) override {
    auto& w = ws();
    grow(w.h_next, rows * width());
    m_.add_forward(i, in_.xhat, z, m_.eval_buffers(), w.h_next.data(), rows);
    residual_add(static_cast<const T*>(w.y_stream.data()), z, w.y_stream.data(), rows,
                 width());  // y ← y + z, in place
    std::swap(w.h, w.h_next);
    return w.h.data();
  }
  const T* end(int64_t rows) override {
    m_.two_stream_merge(ws().h.data(), ws().y_stream.data(), buffers(), ws().merged.data(), rows);
    return ws().merged.data();
  }

 private:
  typename Model<T>::EvalWorkspace& ws() const { return *m_.eval_; }
  int width() const { return m_.config_.width; }
  TwoStreamBuffers<T> buffers() const {
    auto& w = ws();
    return {.xhat = w.xhat.data(),
            .x_mean = w.mean.data(),
            .x_rstd = w.rstd.data(),
            .yhat = w.yhat.data(),
            .y_mean = w.mean.data(),
            .y_rstd = w.rstd.data(),
            .v = w.v.data()};
  }

  Model<T>& m_;
  const T* x_ = nullptr;                    // (rows, D) the current sublayer's x
  TwoStreamInput<T> in_{nullptr, nullptr};  // its x̂ and v
};

template <typename T>
std::unique_ptr<ResidualStream<T>> make_two_streams(Model<T>& model) {
  return std::make_unique<TwoStreams<T>>(model);
}
template <typename T>
std::unique_ptr<InferenceStream<T>> make_two_streams_inference(Model<T>& model) {
  return std::make_unique<TwoStreamsInference<T>>(model);
}

template std::unique_ptr<ResidualStream<float>> make_two_streams(Model<float>&);
template std::unique_ptr<ResidualStream<double>> make_two_streams(Model<double>&);
template std::unique_ptr<InferenceStream<float>> make_two_streams_inference(Model<float>&);
template std::unique_ptr<InferenceStream<double>> make_two_streams_inference(Model<double>&);

}  // namespace normlab
