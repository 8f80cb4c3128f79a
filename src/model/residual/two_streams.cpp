// Two residual streams (docs/schemes.md, "Two streams"; resi_dual, siamesenorm). x is the
// stream the sublayer slots update; y starts as the embedding stream too and gathers every
// branch output z unscaled. Per sublayer, with the scheme's TwoStreamRule:
//   x̂ = N_x(x)                   (renorm_x; else x̂ = x)
//   v = x̂ + N_y(y)               (input_reads_y; else v = x̂)
//   z = N_out(f(s · N_in(v)))     the sublayer's branch (sublayer_forward.cpp)
//   x ← N_post(a ⊙ x̂ + b ⊙ z),   y ← y + z
// and the output before the final norm is h = N_x(x) + N_y(y) (merge_norm_x) or x + N_y(y).
// resiDual (arXiv 2304.14802) is post's slots with no rule flag; SiameseNorm (arXiv
// 2602.08064) is pre's slots with b = 1/sqrt(2(l+1)) and every flag. In training (TwoStreams)
// and inference (TwoStreamsInference), which share the forward pieces.
//
// Letters: N rows, D width, S sublayers.
#include <algorithm>
#include <utility>

#include "core/kernels/norm.hpp"
#include "core/parallel.hpp"
#include "model/buffers.hpp"
#include "model/residual/inference_stream.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/residual_add.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

// Where the norms of the streams go, in training (kept for backward) and in inference (reused);
// a null pointer where the rule does not need a buffer.
template <typename T>
struct TwoStreamBuffers {
  T* xhat = nullptr;                       // (N, D) N_x(x)
  T *x_mean = nullptr, *x_rstd = nullptr;  // (N)
  T* yhat = nullptr;                       // (N, D) N_y(y)
  T *y_mean = nullptr, *y_rstd = nullptr;  // (N)
  T* v = nullptr;                          // (N, D) x̂ + N_y(y), the branch input
};

// What a sublayer reads: x̂, the residual input of its add, and v, the input of its branch.
template <typename T>
struct TwoStreamInput {
  const T* xhat = nullptr;
  const T* v = nullptr;
};

template <typename T>
class TwoStreams final : public ResidualStream<T> {
 public:
  explicit TwoStreams(Model<T>& model) : m_(model) {}

  // The forward pieces of both passes. Sublayer i's x̂ and v over `rows` rows of x and y
  // (rows, D), written into b; and the output h (rows, D) = N_x(x) (or x) + N_y(y).
  static TwoStreamInput<T> branch_input(const Model<T>& m, int i, const T* x, const T* y,
                                        const TwoStreamBuffers<T>& b, int64_t rows) {
    const TwoStreamRule& rule = m.scheme_.two_stream;
    const SublayerParams& p = m.sublayers_[i];
    const int D = m.config_.width;
    TwoStreamInput<T> in{x, x};
    if (rule.renorm_x) {
      norm_forward(norm_weights(m.params_, p.x_norm), x, b.xhat, {b.x_mean, b.x_rstd}, {rows, D},
                   m.config_.norm_eps);
      in.xhat = in.v = b.xhat;
    }
    if (rule.input_reads_y) {
      norm_forward(norm_weights(m.params_, p.y_norm), y, b.yhat, {b.y_mean, b.y_rstd}, {rows, D},
                   m.config_.norm_eps);
      residual_add(in.xhat, static_cast<const T*>(b.yhat), b.v, rows, D);
      in.v = b.v;
    }
    return in;
  }
  static void merge(const Model<T>& m, const T* x, const T* y, const TwoStreamBuffers<T>& b, T* h,
                    int64_t rows) {
    const int D = m.config_.width;
    const T* xs = x;
    if (m.scheme_.two_stream.merge_norm_x) {
      norm_forward(norm_weights(m.params_, m.merge_x_norm_), x, b.xhat, {b.x_mean, b.x_rstd},
                   {rows, D}, m.config_.norm_eps);
      xs = b.xhat;
    }
    norm_forward(norm_weights(m.params_, m.merge_y_norm_), y, b.yhat, {b.y_mean, b.y_rstd},
                 {rows, D}, m.config_.norm_eps);
    residual_add(xs, static_cast<const T*>(b.yhat), h, rows, D);
  }

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

  // y entering each sublayer; per sublayer (the last: the merge, whose v is the output h) the
  // norms of the streams, where the rule has them; the backward's gradients.
  void declare_buffers(Arena<T>& a, int64_t N) override {
    auto& w = ws();
    const TwoStreamRule& rule = m_.scheme_.two_stream;
    const int S = m_.num_sublayers();
    const int64_t D = width();
    w.y_stream.resize(S + 1);
    for (auto& y : w.y_stream) a.declare(y, N * D);
    w.two.resize(S + 1);
    for (int i = 0; i <= S; ++i) {
      auto& s = w.two[i];
      const bool merge = i == S;
      const bool x_norm = merge ? rule.merge_norm_x : rule.renorm_x;
      const bool y_norm = merge || rule.input_reads_y;
      a.declare(s.xhat, x_norm ? N * D : 0);
      a.declare(s.x_mean, x_norm ? N : 0);
      a.declare(s.x_rstd, x_norm ? N : 0);
      a.declare(s.yhat, y_norm ? N * D : 0);
      a.declare(s.y_mean, y_norm ? N : 0);
      a.declare(s.y_rstd, y_norm ? N : 0);
      a.declare(s.v, y_norm ? N * D : 0);
    }
    for (auto* v : {&w.d_y_stream, &w.d_v, &w.d_xhat}) a.declare(*v, N * D);
  }
  T* embedding() override { return ws().stream[0].data(); }
  void begin(int64_t N) override {  // y_0 = x_0
    const T* x = ws().stream[0].data();
    std::copy(x, x + N * width(), ws().y_stream[0].data());
  }
  const T* input(int i, int64_t N) override {
    in_ = branch_input(m_, i, ws().stream[i].data(), ws().y_stream[i].data(), buffers(i), N);
    return in_.v;
  }
  void update(int i, const T* z, int64_t N) override {
    auto& w = ws();
    m_.add_forward(i, in_.xhat, z, m_.train_buffers(i), w.stream[i + 1].data(), N);
    residual_add(static_cast<const T*>(w.y_stream[i].data()), z, w.y_stream[i + 1].data(), N,
                 width());  // y ← y + z
  }
  const T* end(int64_t N) override {
    const TwoStreamBuffers<T> b = buffers(m_.num_sublayers());
    merge(m_, ws().stream.back().data(), ws().y_stream.back().data(), b, b.v, N);
    return b.v;
  }

  T* d_end() override { return ws().d_stream_a.data(); }
  // d_cur becomes dL/dx_S, and d_y_stream holds dL/dy_S.
  void end_backward() override {
    auto& w = ws();
    d_cur_ = w.d_stream_a.data();
    d_next_ = w.d_stream_b.data();
    const int S = m_.num_sublayers();
    const int64_t N = w.batch * w.len;
    const int D = width();
    const auto& s = w.two[S];
    T* dh = d_cur_;
    T* scratch = d_next_;
    // h = x' + N_y(y_S): dL/dy_S = N_y'(dh).
    std::fill(w.d_y_stream.data(), w.d_y_stream.data() + N * D, T(0));
    norm_backward(norm_weights(m_.params_, m_.merge_y_norm_), w.y_stream[S].data(),
                  {s.y_mean.data(), s.y_rstd.data()}, dh, w.d_y_stream.data(),
                  norm_grads(m_.grads_, m_.merge_y_norm_), {N, D});
    if (!m_.scheme_.two_stream.merge_norm_x) return;  // x' = x_S: dL/dx_S = dh
    std::fill(scratch, scratch + N * D, T(0));
    norm_backward(norm_weights(m_.params_, m_.merge_x_norm_), w.stream[S].data(),
                  {s.x_mean.data(), s.x_rstd.data()}, dh, scratch,
                  norm_grads(m_.grads_, m_.merge_x_norm_), {N, D});
    std::copy(scratch, scratch + N * D, dh);
  }
  // d_cur = dL/dx_{i+1} and d_y_stream = dL/dy_{i+1} give the add's part of d_next = dL/dx_i
  // and the branch's gradient.
  BranchGradient<T> update_backward(int i) override {
    auto& w = ws();
    const TwoStreamRule& rule = m_.scheme_.two_stream;
    const int64_t N = w.batch * w.len;
    const int D = width();
    // dL/dx̂: d_next itself when x̂ = x.
    T* d_xhat = rule.renorm_x ? w.d_xhat.data() : d_next_;
    T* d_v = nullptr;
    if (rule.input_reads_y) {
      d_v = w.d_v.data();
      std::fill(d_v, d_v + N * D, T(0));
    }
    const T* x = rule.renorm_x ? w.two.at(i).xhat.data() : w.stream.at(i).data();  // the add's
    T* dz = m_.add_backward(i, x, d_cur_, d_xhat, true);
    // y_{i+1} = y_i + z: dL/dz gains dL/dy_{i+1}, and dL/dy_i starts as dL/dy_{i+1} (as it is).
    const T* dy = w.d_y_stream.data();
    for_row_shards(N, [&](int64_t, int64_t n0, int64_t n1) {
      for (int64_t k = n0 * D; k < n1 * D; ++k) dz[k] += dy[k];
    });
    return {.v = w.inputs.at(i), .dz = dz, .d_v = d_v != nullptr ? d_v : d_xhat};
  }
  // Once the branch's backward has added into it: the rest of d_next and, in place, dL/dy_i.
  void input_backward(int i) override {
    auto& w = ws();
    const TwoStreamRule& rule = m_.scheme_.two_stream;
    const SublayerParams& p = m_.sublayers_[i];
    const auto& s = w.two[i];
    const int64_t N = w.batch * w.len;
    const int D = width();
    T* d_in = d_next_;
    T* d_xhat = rule.renorm_x ? w.d_xhat.data() : d_in;
    if (rule.input_reads_y) {
      // v = x̂ + N_y(y_i).
      const T* d_v = w.d_v.data();
      for_row_shards(N, [&](int64_t, int64_t n0, int64_t n1) {
        for (int64_t k = n0 * D; k < n1 * D; ++k) d_xhat[k] += d_v[k];
      });
      norm_backward(norm_weights(m_.params_, p.y_norm), w.y_stream[i].data(),
                    {s.y_mean.data(), s.y_rstd.data()}, d_v, w.d_y_stream.data(),
                    norm_grads(m_.grads_, p.y_norm), {N, D});
    }
    if (rule.renorm_x) {
      // x̂ = N_x(x_i).
      std::fill(d_in, d_in + N * D, T(0));
      norm_backward(norm_weights(m_.params_, p.x_norm), w.stream[i].data(),
                    {s.x_mean.data(), s.x_rstd.data()}, d_xhat, d_in,
                    norm_grads(m_.grads_, p.x_norm), {N, D});
    }
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
  // Sublayer i's norms of the streams (i = S: the merge's).
  TwoStreamBuffers<T> buffers(int i) {
    auto& s = ws().two.at(i);
    return {.xhat = data_or_null(s.xhat),
            .x_mean = data_or_null(s.x_mean),
            .x_rstd = data_or_null(s.x_rstd),
            .yhat = data_or_null(s.yhat),
            .y_mean = data_or_null(s.y_mean),
            .y_rstd = data_or_null(s.y_rstd),
            .v = data_or_null(s.v)};
  }

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

  void declare_buffers(Arena<T>& a, int64_t N, int64_t R) override {
    auto& w = ws();
    a.declare(w.h, N * width());
    a.declare(w.h_next, N * width());
    a.declare(w.x_rows, R * width());
    for (auto* v : {&w.y_stream, &w.xhat, &w.yhat, &w.v, &w.merged}) a.declare(*v, N * width());
  }
  T* embedding() override { return ws().h.data(); }
  void begin(int64_t N) override {  // y_0 = x_0
    const T* x = ws().h.data();
    std::copy(x, x + N * width(), ws().y_stream.data());
  }
  const T* input(int i, int64_t rows) override {
    x_ = ws().h.data();
    in_ = TwoStreams<T>::branch_input(m_, i, x_, ws().y_stream.data(), buffers(), rows);
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
    m_.add_forward(i, in_.xhat, z, m_.eval_buffers(), w.h_next.data(), rows);
    residual_add(static_cast<const T*>(w.y_stream.data()), z, w.y_stream.data(), rows,
                 width());  // y ← y + z, in place
    std::swap(w.h, w.h_next);
    return w.h.data();
  }
  const T* end(int64_t rows) override {
    TwoStreams<T>::merge(m_, ws().h.data(), ws().y_stream.data(), buffers(), ws().merged.data(),
                         rows);
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
