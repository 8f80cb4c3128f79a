// AttnRes and Block AttnRes (docs/attnres.md): sublayer i reads the softmax mixture of its
// mixing point over the sources before it (the embedding stream and the sublayers' records);
// its branch output z is recorded as source i + 1, added to its block's partial sum when it
// continues a block. There is no residual add. In training (AttnResStream) and inference
// (AttnResInference).
//
// Letters: N rows, D width, S sublayers.
#include <algorithm>

#include "core/kernels/attnres.hpp"
#include "core/parallel.hpp"
#include "model/buffers.hpp"
#include "model/residual/inference_stream.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/residual_add.hpp"
#include "model/workspace.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

template <typename T>
class AttnResStream final : public ResidualStream<T> {
 public:
  // AttnRes records z (or the partial block sum + z) unscaled and unnormalized; the backward
  // relies on it (a continuing record passes its gradient on unchanged).
  explicit AttnResStream(Model<T>& model) : m_(model) {
    for (const SublayerSlots& s : m_.scheme_.sublayers) {
      if (s.norm_post || s.interpolate || s.residual != ScaleSpec{} || s.branch != ScaleSpec{} ||
          s.input_scale != 1.0) {
        throw std::logic_error("AttnRes sublayers must have no post-norm, interpolation or scales");
      }
    }
  }

  void lay_out_input(int, const std::string& prefix, SublayerParams& p) override {
    add_mix(prefix + ".res_query", prefix + ".res_norm", p);
  }
  void lay_out_output() override {  // the final mixture's
    SublayerParams final_mix;
    add_mix("final_res.query", "final_res.norm", final_mix);
    m_.final_res_query_ = final_mix.res_query;
    m_.final_res_norm_ = final_mix.res_key_norm;
  }

  // The sublayers' partial block sums are their r (sublayer_buffers.hpp).
  void declare_buffers(Arena<T>& a, int64_t N) override {
    auto& w = ws();
    const int S = m_.num_sublayers();
    const int64_t D = width();
    a.declare(w.source0, N * D);
    w.sources.assign(S + 1, nullptr);
    w.source_rstd.resize(S + 1);
    w.mix_alpha.resize(S + 1);
    w.mix_logits.resize(S + 1);
    a.declare(w.res_q, (S + 1) * D);
    for (int j = 0; j <= S; ++j) {
      const int64_t K = static_cast<int64_t>(m_.scheme_.res_sources[j].size());
      a.declare(w.source_rstd[j], N);
      a.declare(w.mix_alpha[j], N * K);
      a.declare(w.mix_logits[j], N * K);
    }
    w.d_block.resize(m_.scheme_.res_blocks);
    for (auto& d : w.d_block) a.declare(d, N * D);
    w.mix_src.resize(S + 1);
    w.mix_rstd.resize(S + 1);
    w.mix_dsrc.resize(S + 1);
    w.d_chunk.resize(std::min(chunk(), S + 1));
    for (auto& d : w.d_chunk) a.declare(d, N * D);
    w.chunk_dx.assign(w.d_chunk.size(), nullptr);
  }
  T* embedding() override { return ws().source0.data(); }
  void begin(int64_t N) override {
    auto& w = ws();
    w.sources[0] = w.source0.data();
    res_rstd(static_cast<const T*>(w.source0.data()), w.source_rstd[0].data(), N, width(),
             m_.config_.norm_eps);
    queries();
    source_logits(0, N);
  }
  const T* input(int i, int64_t N) override {
    forward_point(i, N);
    return ws().stream[i].data();
  }
  void update(int i, const T* z, int64_t N) override {
    auto& w = ws();
    const T* record = z;
    if (m_.scheme_.res_continues[i]) {  // the block's partial sum + z
      residual_add(w.sources[i], z, w.subs[i].r, N, width());
      record = w.subs[i].r;
    }
    w.sources[i + 1] = record;
    res_rstd(record, w.source_rstd[i + 1].data(), N, width(), m_.config_.norm_eps);
    source_logits(i + 1, N);
  }
  const T* end(int64_t N) override {
    forward_point(m_.num_sublayers(), N);
    return ws().stream.back().data();
  }

  // d_block holds one gradient per block: dL/d(the block's latest record). A record that
  // continues a block is record j + 1 = record j + z_j, so when sublayer j has read its d_out
  // from the block's buffer the buffer is already dL/d(record j) up to the contributions of
  // mixing point j, which its backward adds next.
  T* d_end() override { return ws().d_stream_a.data(); }
  void end_backward() override {
    auto& w = ws();
    const int64_t N = w.batch * w.len;
    for (auto& d : w.d_block) parallel_zero(d.data(), N * width());
    backward_point(m_.num_sublayers(), w.d_stream_a.data(), N);
  }
  BranchGradient<T> update_backward(int i) override {
    auto& w = ws();
    // dL/dx_i goes to its slot in the chunk's buffers, kept until the chunk's first point.
    dx_ = w.d_chunk[i % chunk()].data();
    const T* x = w.stream[i].data();
    const T* dz =
        m_.add_backward(i, x, w.d_block[m_.scheme_.res_source_block[i + 1]].data(), dx_, false);
    return {.v = x, .dz = dz, .d_v = dx_};
  }
  void input_backward(int i) override { backward_point(i, dx_, ws().batch * ws().len); }
  const T* begin_backward() override { return ws().d_block[0].data(); }

  const T* res_weights(int l) const override { return m_.ws_->mix_alpha.at(l).data(); }
  const T* res_source(int j) const override { return m_.ws_->sources.at(j); }
  const T* res_source_rstd(int j) const override { return m_.ws_->source_rstd.at(j).data(); }
  int64_t res_query_offset(int l) const override {
    return l == m_.num_sublayers() ? m_.final_res_query_ : m_.sublayers_.at(l).res_query;
  }
  int64_t res_gain_offset(int l) const override {
    return l == m_.num_sublayers() ? m_.final_res_norm_.gain
                                   : m_.sublayers_.at(l).res_key_norm.gain;
  }

 private:
  typename Model<T>::Workspace& ws() { return *m_.ws_; }
  int width() const { return m_.config_.width; }

  // A mixing point's pseudo-query (init 0: uniform weights) and the gain of the RMSNorm on its
  // keys (init 1); neither decays.
  void add_mix(const std::string& query, const std::string& norm, SublayerParams& p) {
    const int64_t D = width();
    p.res_query = m_.layout_.add(
        {.name = query, .shape = {D}, .init = InitKind::constant, .init_value = 0.0});
    p.res_key_norm.active = true;
    p.res_key_norm.gain = m_.layout_.add(
        {.name = norm + ".weight", .shape = {D}, .init = InitKind::constant, .init_value = 1.0});
  }

  // stream[l] = the mixture of point l, from the logits its sources were given when they were
  // written: queries() computes every point's q = w ⊙ g at the start of a forward,
  // source_logits(j) gives source j's logits to every point that mixes it. backward_point(l)
  // given dx adds into the block gradients: its own sources at once, the sources its chunk
  // shares once the chunk's first point (the last in backward order) has its dx.
  // The backward goes by chunks of consecutive mixing points (docs/attnres.md, "Backward by
  // chunks"): the sources every point of a chunk attends over, the blocks finished at its first
  // point, are read and their gradients updated once per chunk, in one res_mix_backward call for
  // all its points, instead of once per group. Their gradients are first read by the sublayers
  // below the chunk, so they can wait for its first point. Each point's other sources (blocks
  // finished inside the chunk, its partial sum) are done at the point, because the sublayers inside
  // the chunk read their gradients next. About 8 points: the shared sources' traffic falls with the
  // chunk, the per-point sources' traffic grows with it.
  static constexpr int kChunkPoints = 8;
  int chunk() const {  // the mixing points of one chunk: a multiple of res_block
    const int B = m_.scheme_.res_block;
    return B * std::max(1, kChunkPoints / B);
  }

  void queries() {
    auto& w = ws();
    const int D = m_.config_.width;
    for (int l = 0; l <= m_.num_sublayers(); ++l) {
      const T* query = m_.params_.data() + res_query_offset(l);
      const T* gain = m_.params_.data() + res_gain_offset(l);
      for (int d = 0; d < D; ++d) w.res_q[l * D + d] = query[d] * gain[d];
    }
  }

  // Source j is read once for the logits of all the points that mix it (instead of once per
  // point, in the point's own pass before its mixture): docs/attnres.md, "Forward".
  void source_logits(int j, int64_t rows) {
    auto& w = ws();
    const int D = m_.config_.width;
    w.logit_q.clear();
    w.logit_out.clear();
    for (int l = 0; l <= m_.num_sublayers(); ++l) {
      const std::vector<int>& ids = m_.scheme_.res_sources[l];  // ascending
      const auto it = std::lower_bound(ids.begin(), ids.end(), j);
      if (it == ids.end() || *it != j) continue;
      w.logit_q.push_back(w.res_q.data() + l * D);
      w.logit_out.push_back(w.mix_logits[l].data() + (it - ids.begin()) * rows);
    }
    res_logits(w.sources[j], w.source_rstd[j].data(), w.logit_q.data(), w.logit_out.data(),
               static_cast<int>(w.logit_q.size()), rows, D);
  }

  void forward_point(int l, int64_t rows) {
    auto& w = ws();
    const std::vector<int>& ids = m_.scheme_.res_sources[l];
    const int K = static_cast<int>(ids.size());
    for (int k = 0; k < K; ++k) w.mix_src[k] = w.sources[ids[k]];
    res_mix_from_logits(w.mix_src.data(), K, w.mix_logits[l].data(), w.stream[l].data(),
                        w.mix_alpha[l].data(), rows, m_.config_.width);
    if (m_.hooks_ != nullptr) offer_weights(l, K, rows);
  }

  // A forward hook at point l's weights (B, T, K); changed weights mix the sources again:
  // x = Σ_k α_k source_k (docs/attnres.md).
  void offer_weights(int l, int K, int64_t rows) {
    auto& w = ws();
    const std::string name = l == m_.num_sublayers()
                                 ? std::string("final_res.hook_res_weights")
                                 : m_.hook_block(l) + m_.hook_kind(l) + ".hook_res_weights";
    if (!m_.offer(name, w.mix_alpha[l].data(), rows, {K})) return;
    const int D = width();
    const T* alpha = w.mix_alpha[l].data();
    T* x = w.stream[l].data();
    for (int64_t n = 0; n < rows; ++n) {
      for (int d = 0; d < D; ++d) {
        T sum = 0;
        for (int k = 0; k < K; ++k) sum += alpha[n * K + k] * w.mix_src[k][n * D + d];
        x[n * D + d] = sum;
      }
    }
  }

  void backward_point(int l, const T* dx, int64_t rows) {
    auto& w = ws();
    const int C = chunk();
    const int first = l / C * C;  // the chunk's first point
    w.chunk_dx[l - first] = dx;
    auto point = [&](int p) {
      ResMixPoint<T> pt;
      pt.alpha = w.mix_alpha[p].data();
      pt.alpha_stride = static_cast<int64_t>(m_.scheme_.res_sources[p].size());
      pt.x = w.stream[p].data();
      pt.dx = w.chunk_dx[p - first];
      pt.w = m_.params_.data() + res_query_offset(p);
      pt.g = m_.params_.data() + res_gain_offset(p);
      pt.dw = m_.grads_.data() + res_query_offset(p);
      pt.dg = m_.grads_.data() + res_gain_offset(p);
      return pt;
    };
    // Sources ids[k0 .. k1) of point l (their columns in α), for the given points.
    auto run = [&](const std::vector<int>& ids, int k0, int k1, const ResMixPoint<T>* pts, int P) {
      for (int k = k0; k < k1; ++k) {
        w.mix_src[k - k0] = w.sources[ids[k]];
        w.mix_rstd[k - k0] = w.source_rstd[ids[k]].data();
        w.mix_dsrc[k - k0] = w.d_block[m_.scheme_.res_source_block[ids[k]]].data();
      }
      res_mix_backward(w.mix_src.data(), w.mix_rstd.data(), w.mix_dsrc.data(), k1 - k0, pts, P,
                       rows, m_.config_.width);
    };
    // The chunk's first point starts a block, so all its sources are finished blocks, and they
    // are the leading sources of every later point of the chunk.
    const std::vector<int>& ids = m_.scheme_.res_sources[l];
    const int K = static_cast<int>(ids.size());
    const int shared = static_cast<int>(m_.scheme_.res_sources[first].size());
    if (shared < K) {  // this point's own sources: needed by the sublayers before l in the chunk
      ResMixPoint<T> pt = point(l);
      pt.alpha_col = shared;
      run(ids, shared, K, &pt, 1);
    }
    if (l != first) return;
    // The chunk's shared sources, read once for all its points.
    const int last = std::min(first + C - 1, m_.num_sublayers());
    w.chunk_points.clear();
    for (int p = first; p <= last; ++p) w.chunk_points.push_back(point(p));
    run(ids, 0, shared, w.chunk_points.data(), static_cast<int>(w.chunk_points.size()));
  }

  Model<T>& m_;
  T* dx_ = nullptr;
};

// Inference: one buffer per block holds its latest record (a partial sum is added in place,
// as nothing is kept for a backward), with the records' 1/rms; h holds the current mixture.
template <typename T>
class AttnResInference final : public InferenceStream<T> {
 public:
  explicit AttnResInference(Model<T>& model) : m_(model) {}

  void declare_buffers(Arena<T>& a, int64_t N, int64_t R) override {
    auto& w = ws();
    const int S = m_.num_sublayers();
    a.declare(w.h, N * width());
    a.declare(w.x_rows, R * width());
    w.block.resize(m_.scheme_.res_blocks);
    w.block_rstd.resize(m_.scheme_.res_blocks);
    for (int b = 0; b < m_.scheme_.res_blocks; ++b) {
      a.declare(w.block[b], N * width());
      a.declare(w.block_rstd[b], N);
    }
    a.declare(w.alpha, N * (S + 1));
    w.mix_src.resize(S + 1);
    w.mix_rstd.resize(S + 1);
  }
  T* embedding() override { return ws().block[0].data(); }
  void begin(int64_t N) override {
    res_rstd(static_cast<const T*>(ws().block[0].data()), ws().block_rstd[0].data(), N, width(),
             m_.config_.norm_eps);
  }
  const T* input(int i, int64_t rows) override {
    mix(i, rows);
    x_ = ws().h.data();
    return x_;
  }
  const T* residual_input() const override { return x_; }
  void keep_rows(int i, const std::vector<int64_t>& rows) override {
    auto& w = ws();
    keep_listed_rows(x_, rows, width(), w.x_rows.data());
    x_ = w.x_rows.data();
    for (int b = 0; b <= m_.scheme_.res_source_block[i]; ++b) {  // the sources written so far
      keep_listed_rows(w.block[b].data(), rows, width(), w.block[b].data());
      keep_listed_rows(w.block_rstd[b].data(), rows, 1, w.block_rstd[b].data());
    }
  }
  const T* update(int i, const T* z, int64_t rows) override {  // record i + 1 in its block
    auto& w = ws();
    const int b = m_.scheme_.res_source_block[i + 1];
    T* record = w.block[b].data();
    if (m_.scheme_.res_continues[i]) {  // the block's partial sum + z
      residual_add(static_cast<const T*>(record), z, record, rows, width());
    } else {
      std::copy(z, z + rows * width(), record);
    }
    res_rstd(static_cast<const T*>(record), w.block_rstd[b].data(), rows, width(),
             m_.config_.norm_eps);
    return record;
  }
  const T* end(int64_t rows) override {
    mix(m_.num_sublayers(), rows);
    return ws().h.data();
  }

 private:
  typename Model<T>::EvalWorkspace& ws() const { return *m_.eval_; }
  int width() const { return m_.config_.width; }
  // h = the mixture of point l over `rows` rows. Source j lives in the buffer of its block,
  // which holds record j when point l reads it (the block's last record once finished, or
  // record l, the current partial sum).
  void mix(int l, int64_t rows) {
    auto& w = ws();
    const std::vector<int>& ids = m_.scheme_.res_sources[l];
    const int K = static_cast<int>(ids.size());
    for (int k = 0; k < K; ++k) {
      const int b = m_.scheme_.res_source_block[ids[k]];
      w.mix_src[k] = w.block[b].data();
      w.mix_rstd[k] = w.block_rstd[b].data();
    }
    res_mix_forward(
        w.mix_src.data(), w.mix_rstd.data(), K, m_.params_.data() + m_.res_query_offset(l),
        m_.params_.data() + m_.res_gain_offset(l), w.h.data(), w.alpha.data(), rows, width());
  }

  Model<T>& m_;
  const T* x_ = nullptr;  // (rows, D) the current sublayer's mixture
};

template <typename T>
std::unique_ptr<ResidualStream<T>> make_attnres_stream(Model<T>& model) {
  return std::make_unique<AttnResStream<T>>(model);
}
template <typename T>
std::unique_ptr<InferenceStream<T>> make_attnres_inference(Model<T>& model) {
  return std::make_unique<AttnResInference<T>>(model);
}

template std::unique_ptr<ResidualStream<float>> make_attnres_stream(Model<float>&);
template std::unique_ptr<ResidualStream<double>> make_attnres_stream(Model<double>&);
template std::unique_ptr<InferenceStream<float>> make_attnres_inference(Model<float>&);
template std::unique_ptr<InferenceStream<double>> make_attnres_inference(Model<double>&);

}  // namespace normlab
