// The additive residual stream (docs/schemes.md, "The block"): sublayer i reads x_i and leaves
// x_{i+1} = N_post(a ⊙ x_i + b ⊙ z_i), or nGPT's interpolation (Model::add_forward).
//
// Letters: N rows, D width, S sublayers.
#include <utility>

#include "model/residual/residual_stream.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/model.hpp"

namespace normlab {

template <typename T>
class AdditiveStream final : public ResidualStream<T> {
 public:
  explicit AdditiveStream(Model<T>& model) : m_(model) {}

  void prepare(int64_t) override {}
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

template <typename T>
std::unique_ptr<ResidualStream<T>> make_additive_stream(Model<T>& model) {
  return std::make_unique<AdditiveStream<T>>(model);
}

template std::unique_ptr<ResidualStream<float>> make_additive_stream(Model<float>&);
template std::unique_ptr<ResidualStream<double>> make_additive_stream(Model<double>&);

}  // namespace normlab
