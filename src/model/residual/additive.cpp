// The additive residual stream (docs/schemes.md, "The block"): sublayer i reads x_i and leaves
// x_{i+1} = N_post(a ⊙ x_i + b ⊙ z_i), or nGPT's interpolation (Model::add_forward); in
// training (AdditiveStream) and inference (AdditiveInference).
//
// Letters: N rows, D width, S sublayers.
#include <utility>

#include "model/buffers.hpp"
#include "model/residual/inference_stream.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

template <typename T>
class AdditiveStream final : public ResidualStream<T> {
 public:
  explicit AdditiveStream(Model<T>& model) : m_(model) {}

  void lay_out_input(int i, const std::string& prefix, SublayerParams& p) override {
    const SublayerSlots& slots = m_.scheme_.sublayers[i];  // nGPT: N_x of the interpolation,
    if (slots.interpolate) p.x_norm = m_.add_norm(prefix + ".x_norm", true, slots.kind_post);
  }  // of the post slot's kind

  void declare_buffers(Arena<T>&, int64_t) override {}  // the model's stream only
  T* embedding() override { return ws().stream[0].data(); }
  void begin(int64_t) override {}
  const T* input(int i, int64_t) override { return ws().stream[i].data(); }
  void update(int i, const T* z, int64_t N) override {
    m_.add_forward(i, ws().stream[i].data(), z, m_.train_buffers(i), ws().stream[i + 1].data(), N);
  }
  const T* end(int64_t) override { return ws().stream.back().data(); }

  T* d_end() override { return ws().d_stream_a.data(); }
  void end_backward() override {
    d_cur_ = ws().d_stream_a.data();   // dL/dx_{i+1}
    d_next_ = ws().d_stream_b.data();  // dL/dx_i
  }
  BranchGradient<T> update_backward(int i) override {
    const T* x = ws().stream[i].data();
    const T* dz = m_.add_backward(i, x, d_cur_, d_next_, true);
    return {.v = x, .dz = dz, .d_v = d_next_};
  }
  void input_backward(int) override { std::swap(d_cur_, d_next_); }
  const T* begin_backward() override { return d_cur_; }

 private:
  typename Model<T>::Workspace& ws() { return *m_.ws_; }

  Model<T>& m_;
  T *d_cur_ = nullptr, *d_next_ = nullptr;
};

// Inference: x in h, x_{i+1} into h_next, then swapped.
template <typename T>
class AdditiveInference final : public InferenceStream<T> {
 public:
  explicit AdditiveInference(Model<T>& model) : m_(model) {}

  void declare_buffers(Arena<T>& a, int64_t N, int64_t R) override {
    auto& w = ws();
    a.declare(w.h, N * width());
    a.declare(w.h_next, N * width());
    a.declare(w.x_rows, R * width());
  }
  T* embedding() override { return ws().h.data(); }
  void begin(int64_t) override {}
  const T* input(int, int64_t) override {
    x_ = ws().h.data();
    return x_;
  }
  const T* residual_input() const override { return x_; }
  void keep_rows(int, const std::vector<int64_t>& rows) override {
    keep_listed_rows(x_, rows, width(), ws().x_rows.data());
    x_ = ws().x_rows.data();
  }
  const T* update(int i, const T* z, int64_t rows) override {
    auto& w = ws();
    m_.add_forward(i, x_, z, m_.eval_buffers(), w.h_next.data(), rows);
    std::swap(w.h, w.h_next);
    return w.h.data();
  }
  const T* end(int64_t) override { return ws().h.data(); }

 private:
  typename Model<T>::EvalWorkspace& ws() const { return *m_.eval_; }
  int width() const { return m_.config_.width; }

  Model<T>& m_;
  const T* x_ = nullptr;  // (rows, D) the current sublayer's x
};

template <typename T>
std::unique_ptr<ResidualStream<T>> make_additive_stream(Model<T>& model) {
  return std::make_unique<AdditiveStream<T>>(model);
}
template <typename T>
std::unique_ptr<InferenceStream<T>> make_additive_inference(Model<T>& model) {
  return std::make_unique<AdditiveInference<T>>(model);
}

template std::unique_ptr<ResidualStream<float>> make_additive_stream(Model<float>&);
template std::unique_ptr<ResidualStream<double>> make_additive_stream(Model<double>&);
template std::unique_ptr<InferenceStream<float>> make_additive_inference(Model<float>&);
template std::unique_ptr<InferenceStream<double>> make_additive_inference(Model<double>&);

}  // namespace normlab
