// Hyper-connections (docs/schemes.md, "Hyper-connections"). Each token
// carries n streams H = (H_0 .. H_{n−1}) of width D, all the embedding at first. Sublayer i
// reads h = Σ_s A_m[s] H_s, runs its pre-norm branch z = f(N_in(h)) (sublayer_forward.cpp), and
// writes H'_j = B[j] z + Σ_s A_r[s][j] H_s; the output is Σ_j H_j. The weights depend on H:
//   HC (arXiv 2409.19606, dynamic):  H̄_s = N(H_s),
//       [A_m | A_r][s] = static_alpha[s] + s_α tanh(H̄_s W_α),  B[s] = static_beta[s] + s_β tanh(H̄_s
//       w_β)
//   mHC (arXiv 2512.24880, `sinkhorn`): x̃ = RMSNorm(vec H) (nD, no gain),
//       A_m = σ(α_pre x̃φ_pre + b_pre),  B = 2σ(α_post x̃φ_post + b_post),
//       M = Sinkhorn-Knopp(α_res mat(x̃φ_res) + b_res),  H'_j = … + Σ_s M[j][s] H_s (A_r = Mᵀ).
// In training (HyperStreams) and inference (HyperInference), which share the forward pieces;
// Sinkhorn–Knopp is src/model/hyper_conn.cpp.
//
// Letters: N = B·T rows, n streams, D width, S sublayers, W = n(n+2) weights per row.
#include <algorithm>
#include <cmath>
#include <utility>

#include "core/kernels/block16.hpp"
#include "core/kernels/norm.hpp"
#include "core/parallel.hpp"
#include "model/buffers.hpp"
#include "model/hyper_conn.hpp"
#include "model/residual/inference_stream.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/model/model.hpp"

namespace normlab {
namespace {

// The backward of one row's update H'_j = B[j] z + Σ_s A_r[s][j] H_s, given g (n, D), g_j =
// dL/dH'_j. With the inputs x_s = H_s for s < n and x_n = z, and their coefficients
// a_s[j] = A_r[s][j], a_n[j] = B[j]:
//   dx_s[d] = Σ_j a_s[j] g_j[d]  (j ascending: dH (n, D) and dz overwritten),
//   da_s[j] = ⟨x_s, g_j⟩          (d ascending: into d_mix's A_r and B).
// The dot products run in lanes, one per j: g transposed into gT (D, Jp), Jp = n rounded up to
// a multiple of 16 (lanes j ≥ n stay 0), and kInputsAtOnce inputs' sums advance together one d
// at a time, in registers.
template <typename T>
struct UpdateBackwardScratch {
  std::vector<T> gT;     // (D, Jp)
  std::vector<T> zeros;  // (D): the input of the lanes past x_n
};

constexpr int kInputsAtOnce = 4;

template <typename T>
void update_backward_row(const T* H, const T* z, const T* mix, const T* g, T* dH, T* dz, T* d_mix,
                         int n, int D, UpdateBackwardScratch<T>& scratch) {
  const int64_t Jp = pad16(n);
  if (scratch.gT.size() != static_cast<size_t>(D * Jp)) {
    scratch.gT.assign(D * Jp, T(0));
    scratch.zeros.assign(D, T(0));
  }
  const auto input = [&](int s) { return s < n ? H + s * D : s == n ? z : scratch.zeros.data(); };
  const auto coefficient = [&](int s, int j) { return s < n ? n + s * n + j : n + n * n + j; };
  for (int j = 0; j < n; ++j) {
    for (int d = 0; d < D; ++d) scratch.gT[d * Jp + j] = g[j * D + d];
  }
  for (int s0 = 0; s0 <= n; s0 += kInputsAtOnce) {
    const T* x[kInputsAtOnce];
    for (int k = 0; k < kInputsAtOnce; ++k) x[k] = input(s0 + k);
    for (int64_t j0 = 0; j0 < Jp; j0 += kBlock) {
      Block16<T> dots[kInputsAtOnce] = {};
      for (int d = 0; d < D; ++d) {
        const Block16<T> gd = load16(scratch.gT.data() + d * Jp + j0);
        for (int k = 0; k < kInputsAtOnce; ++k) dots[k] += gd * x[k][d];
      }
      for (int k = 0; k < kInputsAtOnce && s0 + k <= n; ++k) {
        for (int64_t j = j0; j < std::min<int64_t>(j0 + kBlock, n); ++j) {
          d_mix[coefficient(s0 + k, static_cast<int>(j))] = dots[k][j - j0];
        }
      }
    }
  }
  for (int s = 0; s <= n; ++s) {
    T* out = s < n ? dH + s * D : dz;
    for (int d0 = 0; d0 < D; d0 += kBlock) {
      Block16<T> v = {};
      for (int j = 0; j < n; ++j) v += load_first(g + j * D + d0, D - d0) * mix[coefficient(s, j)];
      store_first(out + d0, D - d0, v);
    }
  }
}

// HC's pre-activations are computed for this many (row, stream) pairs at once, one per lane.
constexpr int kPairs = kBlock;

template <typename T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

}  // namespace

template <typename T>
class HyperStreams final : public ResidualStream<T> {
 public:
  explicit HyperStreams(Model<T>& model) : m_(model) {}

  // The forward pieces of both passes, over `rows` rows. Sublayer i's weights from H (rows, n,
  // D) into b.mix (rows, n(n+2)): per row A_m (n), A_r (n, n; [s][j] the weight of stream s in
  // new stream j) and B (n), and what their backward needs into b's other buffers; then
  // h = Σ_s A_m[s] H_s (rows, D); H'_j = B[j] z + Σ_s A_r[s][j] H_s; and the sum Σ_j H_j.
  static void compute_weights(const Model<T>& m, int i, const T* H, const HyperBuffers<T>& b,
                              int64_t rows) {
    const HyperParams& hp = m.sublayers_[i].hc;
    const int n = m.hyper_streams(), D = m.config_.width;
    const int W = n * (n + 2);
    if (!m.config_.sinkhorn) {
      norm_forward(norm_weights(m.params_, hp.norm), H, b.hbar, {b.mean, b.rstd}, {rows * n, D},
                   m.config_.norm_eps);
      const T* Sa = m.params_.data() + hp.static_alpha;
      const T* Sb = m.params_.data() + hp.static_beta;
      const T* Wa = m.params_.data() + hp.dynamic_alpha;
      const T* Wb = m.params_.data() + hp.dynamic_beta;
      const T sa = m.params_[hp.alpha_scale], sb = m.params_[hp.beta_scale];
      for_row_shards(rows, [&](int64_t, int64_t r0, int64_t r1) {
        // The pairs (r, s) of the shard, kPairs at a time: their H̄ rows transposed into
        // hbT (D, kPairs), so that each pre-activation H̄_s W_α[:, c] (and H̄_s w_β) is a sum
        // over d in ascending order in its own lane, as one pair at a time would add it.
        std::vector<T> hbT(D * kPairs);
        std::vector<Block16<T>> acc(n + 2);
        const int64_t p_end = r1 * n;
        for (int64_t p0 = r0 * n; p0 < p_end; p0 += kPairs) {
          const int64_t count = std::min<int64_t>(kPairs, p_end - p0);
          std::fill(hbT.begin(), hbT.end(), T(0));
          for (int64_t p = 0; p < count; ++p) {
            const T* hb = b.hbar + (p0 + p) * D;
            for (int d = 0; d < D; ++d) hbT[d * kPairs + p] = hb[d];
          }
          std::fill(acc.begin(), acc.end(), Block16<T>{});
          for (int d = 0; d < D; ++d) {
            const Block16<T> h = load16(hbT.data() + d * kPairs);
            for (int c = 0; c <= n; ++c) acc[c] += h * Wa[d * (n + 1) + c];
            acc[n + 1] += h * Wb[d];
          }
          for (int64_t p = 0; p < count; ++p) {
            const int64_t r = (p0 + p) / n;
            const int s = static_cast<int>((p0 + p) % n);
            T* act = b.act + r * W;
            T* mix = b.mix + r * W;
            for (int c = 0; c <= n; ++c) act[s * (n + 1) + c] = std::tanh(acc[c][p]);
            act[n * (n + 1) + s] = std::tanh(acc[n + 1][p]);
            mix[s] = Sa[s * (n + 1)] + sa * act[s * (n + 1)];
            for (int j = 0; j < n; ++j) {
              mix[n + s * n + j] = Sa[s * (n + 1) + 1 + j] + sa * act[s * (n + 1) + 1 + j];
            }
            mix[n + n * n + s] = Sb[s] + sb * act[n * (n + 1) + s];
          }
        }
      });
      return;
    }
    const int64_t K = int64_t{n} * D;
    const int n2 = n * n;
    const T* phi_pre = m.params_.data() + hp.phi_pre;
    const T* phi_post = m.params_.data() + hp.phi_post;
    const T* phi_res = m.params_.data() + hp.phi_res;
    const T g_pre = m.params_[hp.gate_pre], g_post = m.params_[hp.gate_post],
            g_res = m.params_[hp.gate_res];
    const T* b_pre = m.params_.data() + hp.b_pre;
    const T* b_post = m.params_.data() + hp.b_post;
    const T* b_res = m.params_.data() + hp.b_res;
    const T eps = T(m.config_.norm_eps);
    for_row_shards(rows, [&](int64_t, int64_t r0, int64_t r1) {
      std::vector<T> L(n2), trace((2 * kSinkhornIters + 1) * n2);
      for (int64_t r = r0; r < r1; ++r) {
        const T* x = H + r * K;
        T ss = 0;
        for (int64_t c = 0; c < K; ++c) ss += x[c] * x[c];
        const T rs = T(1) / std::sqrt(ss / T(K) + eps);
        b.rms[r] = rs;
        T* act = b.act + r * W;  // pre (n) | res (n²) | post (n)
        std::fill(act, act + W, T(0));
        for (int64_t c = 0; c < K; ++c) {
          const T xc = x[c] * rs;
          for (int j = 0; j < n; ++j) {
            act[j] += xc * phi_pre[c * n + j];
            act[n + n2 + j] += xc * phi_post[c * n + j];
          }
          for (int k = 0; k < n2; ++k) act[n + k] += xc * phi_res[c * n2 + k];
        }
        T* mix = b.mix + r * W;
        for (int j = 0; j < n; ++j) {
          mix[j] = sigmoid(g_pre * act[j] + b_pre[j]);
          mix[n + n2 + j] = T(2) * sigmoid(g_post * act[n + n2 + j] + b_post[j]);
        }
        for (int k = 0; k < n2; ++k) L[k] = g_res * act[n + k] + b_res[k];
        sinkhorn_forward(L.data(), n, kSinkhornIters, trace.data());
        const T* M = trace.data() + 2 * kSinkhornIters * n2;
        // H'_a = Σ_s M[a][s] H_s: stream s enters a with weight M[a][s].
        for (int a = 0; a < n; ++a) {
          for (int s = 0; s < n; ++s) mix[n + s * n + a] = M[a * n + s];
        }
      }
    });
  }

  static void mix_into_input(const Model<T>& m, const T* H, const T* mix, T* h, int64_t rows) {
    const int n = m.hyper_streams(), D = m.config_.width;
    const int W = n * (n + 2);
    for_row_shards(rows, [&](int64_t, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* m = mix + r * W;
        T* out = h + r * D;
        std::fill(out, out + D, T(0));
        for (int s = 0; s < n; ++s) {
          const T* Hs = H + (r * n + s) * D;
          for (int d = 0; d < D; ++d) out[d] += m[s] * Hs[d];
        }
      }
    });
  }

  static void update_streams(const Model<T>& m, const T* H, const T* mix, const T* z, T* H_out,
                             int64_t rows) {
    const int n = m.hyper_streams(), D = m.config_.width;
    const int W = n * (n + 2);
    for_row_shards(rows, [&](int64_t, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* m = mix + r * W;
        const T* zr = z + r * D;
        for (int j = 0; j < n; ++j) {
          T* out = H_out + (r * n + j) * D;
          const T bj = m[n + n * n + j];
          for (int d = 0; d < D; ++d) out[d] = bj * zr[d];
          for (int s = 0; s < n; ++s) {
            const T a = m[n + s * n + j];
            const T* Hs = H + (r * n + s) * D;
            for (int d = 0; d < D; ++d) out[d] += a * Hs[d];
          }
        }
      }
    });
  }

  static void merge_streams(const Model<T>& m, const T* H, T* h, int64_t rows) {
    const int n = m.hyper_streams(), D = m.config_.width;
    for_row_shards(rows, [&](int64_t, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        T* out = h + r * D;
        std::copy(H + r * n * D, H + (r * n + 1) * D, out);
        for (int s = 1; s < n; ++s) {
          const T* Hs = H + (r * n + s) * D;
          for (int d = 0; d < D; ++d) out[d] += Hs[d];
        }
      }
    });
  }

  void lay_out_input(int i, const std::string& prefix, SublayerParams& p) override {
    m_.add_hyper(prefix + ".hc", i, p.hc);
  }

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
    const HyperBuffers<T> b = buffers(i);
    const T* H = ws().hyper_H[i].data();
    compute_weights(m_, i, H, b, N);
    if (m_.hooks_ != nullptr) {  // changed weights are the ones mixed and updated with
      const int64_t n = m_.hyper_streams();
      m_.offer(m_.hook_block(i) + m_.hook_kind(i) + ".hook_hc_weights", b.mix, N, {n * (n + 2)});
    }
    mix_into_input(m_, H, b.mix, ws().stream[i].data(), N);
    return ws().stream[i].data();
  }
  void update(int i, const T* z, int64_t N) override {
    update_streams(m_, ws().hyper_H[i].data(), buffers(i).mix, z, ws().hyper_H[i + 1].data(), N);
  }
  const T* end(int64_t N) override {  // the stream after the last sublayer: Σ_j H_j
    merge_streams(m_, ws().hyper_H.back().data(), ws().stream.back().data(), N);
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
  BranchGradient<T> update_backward(int i) override { return update_backward_of(i, dH_, dH_next_); }
  void input_backward(int i) override {
    input_backward_of(i, dH_next_);
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

  // The workspace's streams and weights for N rows; sublayer i's weights' buffers. Backward of
  // sublayer i, around its branch's: dH_out = dL/dH_{i+1} gives the part of dH_in = dL/dH_i
  // through A_r and the branch's gradient (dz through B); then, once the branch's backward has
  // given dL/dh, the part through A_m and the weights (weights_backward: parameter gradients,
  // and dH_in += the gradient through the weights, given d_mix (N, n(n+2))).
  void declare_buffers(Arena<T>& a, int64_t N) override {
    auto& w = ws();
    const int S = m_.num_sublayers();
    const int64_t n = m_.hyper_streams(), D = m_.config_.width;
    const int64_t W = n * (n + 2);
    const bool mhc = m_.config_.sinkhorn;
    w.hyper_H.resize(S + 1);
    for (auto& H : w.hyper_H) a.declare(H, N * n * D);
    w.hyper.resize(S);
    for (auto& s : w.hyper) {
      a.declare(s.rms, mhc ? N : 0);
      a.declare(s.hbar, mhc ? 0 : N * n * D);
      a.declare(s.mean, mhc ? 0 : N * n);
      a.declare(s.rstd, mhc ? 0 : N * n);
      a.declare(s.act, N * W);
      a.declare(s.mix, N * W);
    }
    for (auto* v : {&w.d_H_a, &w.d_H_b, &w.d_hbar}) a.declare(*v, N * n * D);
    a.declare(w.d_mix, N * W);
    a.declare(w.hyper_dz, N * D);
  }

  HyperBuffers<T> buffers(int i) {
    auto& s = ws().hyper.at(i);
    return {.hbar = data_or_null(s.hbar),
            .mean = data_or_null(s.mean),
            .rstd = data_or_null(s.rstd),
            .act = data_or_null(s.act),
            .rms = data_or_null(s.rms),
            .mix = data_or_null(s.mix)};
  }

  BranchGradient<T> update_backward_of(int i, const T* dH_out, T* dH_in) {
    auto& w = ws();
    const int64_t N = w.batch * w.len;
    const int n = m_.hyper_streams(), D = m_.config_.width;
    const int W = n * (n + 2);
    const T* H = w.hyper_H[i].data();
    const T* mix = w.hyper[i].mix.data();
    const T* z = m_.stream_branch(i);
    T* dz = w.hyper_dz.data();
    T* d_mix = w.d_mix.data();
    // H'_j = B[j] z + Σ_s A_r[s][j] H_s (update_backward_row).
    for_row_shards(N, [&](int64_t, int64_t r0, int64_t r1) {
      UpdateBackwardScratch<T> scratch;
      for (int64_t r = r0; r < r1; ++r) {
        update_backward_row(H + r * n * D, z + r * D, mix + r * W, dH_out + r * n * D,
                            dH_in + r * n * D, dz + r * D, d_mix + r * W, n, D, scratch);
      }
    });
    // z = f(N_in(h)): dh from dz (the slots' add is not used: no residual path).
    T* dh = w.d_stream_b.data();
    const T* d_branch = m_.add_backward(i, w.stream[i].data(), dz, dh, false);
    return {.v = w.stream[i].data(), .dz = d_branch, .d_v = dh};
  }

  void input_backward_of(int i, T* dH_in) {
    auto& w = ws();
    const int64_t N = w.batch * w.len;
    const int n = m_.hyper_streams(), D = m_.config_.width;
    const int W = n * (n + 2);
    const T* H = w.hyper_H[i].data();
    const T* mix = w.hyper[i].mix.data();
    T* d_mix = w.d_mix.data();
    const T* dh = w.d_stream_b.data();
    // h = Σ_s A_m[s] H_s.
    for_row_shards(N, [&](int64_t, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* m = mix + r * W;
        T* dm = d_mix + r * W;
        const T* g = dh + r * D;
        for (int s = 0; s < n; ++s) {
          const T* Hs = H + (r * n + s) * D;
          T* dHs = dH_in + (r * n + s) * D;
          T da = 0;
          for (int d = 0; d < D; ++d) {
            dHs[d] += m[s] * g[d];
            da += Hs[d] * g[d];
          }
          dm[s] = da;
        }
      }
    });
    weights_backward(i, d_mix, dH_in);
  }

  void weights_backward(int i, const T* d_mix, T* dH_in) {
    auto& w = ws();
    const HyperParams& hp = m_.sublayers_[i].hc;
    const auto& buf = w.hyper[i];
    const int64_t N = w.batch * w.len;
    const int n = m_.hyper_streams(), D = m_.config_.width;
    const int W = n * (n + 2);
    const T* act = buf.act.data();
    const T* H = w.hyper_H[i].data();
    // e (N, W): the gradient of the pre-activations, in the layout of act.
    T* e = w.d_mix.data();  // overwritten in place, row by row (d_mix may alias it)
    if (!m_.config_.sinkhorn) {
      const T* Wa = m_.params_.data() + hp.dynamic_alpha;
      const T* Wb = m_.params_.data() + hp.dynamic_beta;
      const T sa = m_.params_[hp.alpha_scale], sb = m_.params_[hp.beta_scale];
      T* dSa = m_.grads_.data() + hp.static_alpha;
      T* dSb = m_.grads_.data() + hp.static_beta;
      T& dsa = m_.grads_[hp.alpha_scale];
      T& dsb = m_.grads_[hp.beta_scale];
      // Static weights and scales: sums over rows, sequential (deterministic); then the
      // pre-activation gradients in act's layout.
      std::vector<T> g(W);
      for (int64_t r = 0; r < N; ++r) {
        const T* dm = d_mix + r * W;
        const T* a = act + r * W;
        for (int s = 0; s < n; ++s) {
          for (int c = 0; c <= n; ++c) {
            const T dalpha = c == 0 ? dm[s] : dm[n + s * n + c - 1];
            dSa[s * (n + 1) + c] += dalpha;
            dsa += dalpha * a[s * (n + 1) + c];
            const T t = a[s * (n + 1) + c];
            g[s * (n + 1) + c] = sa * dalpha * (T(1) - t * t);
          }
          const T dbeta = dm[n + n * n + s];
          dSb[s] += dbeta;
          const T t = a[n * (n + 1) + s];
          dsb += dbeta * t;
          g[n * (n + 1) + s] = sb * dbeta * (T(1) - t * t);
        }
        std::copy(g.begin(), g.end(), e + r * W);
      }
      // W_α, w_β: Σ over rows and streams of H̄ ⊗ e, sequential. W_α's gradient is added up
      // transposed, dWaT (n + 1, D), so that the sums over d run contiguous; each element
      // still adds its terms in the order of the rows and streams.
      const T* hbar = buf.hbar.data();
      T* dWa = m_.grads_.data() + hp.dynamic_alpha;
      T* dWb = m_.grads_.data() + hp.dynamic_beta;
      std::vector<T> dWaT((n + 1) * D);
      for (int d = 0; d < D; ++d) {
        for (int c = 0; c <= n; ++c) dWaT[c * D + d] = dWa[d * (n + 1) + c];
      }
      for (int64_t r = 0; r < N; ++r) {
        const T* er = e + r * W;
        for (int s = 0; s < n; ++s) {
          const T* hb = hbar + (r * n + s) * D;
          for (int c = 0; c <= n; ++c) {
            const T ec = er[s * (n + 1) + c];
            T* __restrict out = dWaT.data() + c * D;
            for (int d = 0; d < D; ++d) out[d] += hb[d] * ec;
          }
          const T eb = er[n * (n + 1) + s];
          for (int d = 0; d < D; ++d) dWb[d] += hb[d] * eb;
        }
      }
      for (int d = 0; d < D; ++d) {
        for (int c = 0; c <= n; ++c) dWa[d * (n + 1) + c] = dWaT[c * D + d];
      }
      // dH̄_s[d] = e_β[s] w_β[d] + Σ_c e_α[s][c] W_α[d][c], c ascending; then through N into
      // dH. W_α is read transposed (WaT (n + 1, D)) so that each term runs over d contiguous.
      T* dhbar = w.d_hbar.data();
      std::vector<T> WaT((n + 1) * D);
      for (int d = 0; d < D; ++d) {
        for (int c = 0; c <= n; ++c) WaT[c * D + d] = Wa[d * (n + 1) + c];
      }
      for_row_shards(N, [&](int64_t, int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const T* er = e + r * W;
          for (int s = 0; s < n; ++s) {
            T* __restrict out = dhbar + (r * n + s) * D;
            const T eb = er[n * (n + 1) + s];
            for (int d = 0; d < D; ++d) out[d] = eb * Wb[d];
            for (int c = 0; c <= n; ++c) {
              const T ec = er[s * (n + 1) + c];
              const T* wc = WaT.data() + c * D;
              for (int d = 0; d < D; ++d) out[d] += ec * wc[d];
            }
          }
        }
      });
      norm_backward(norm_weights(m_.params_, hp.norm), H, {buf.mean.data(), buf.rstd.data()}, dhbar,
                    dH_in, norm_grads(m_.grads_, hp.norm), {N * n, D});
      return;
    }
    // mHC.
    const int n2 = n * n;
    const int64_t K = int64_t{n} * D;
    const T g_pre = m_.params_[hp.gate_pre], g_post = m_.params_[hp.gate_post],
            g_res = m_.params_[hp.gate_res];
    const T* b_res = m_.params_.data() + hp.b_res;  // the backward needs only the res biases
    const T* mixes = buf.mix.data();
    // The gradients of the pre-activations H̃ (pre | res | post) per row, in parallel.
    for_row_shards(N, [&](int64_t, int64_t r0, int64_t r1) {
      std::vector<T> L(n2), trace((2 * kSinkhornIters + 1) * n2), dM(n2), dL(n2), out(W);
      for (int64_t r = r0; r < r1; ++r) {
        const T* dm = d_mix + r * W;
        const T* m = mixes + r * W;
        const T* a = act + r * W;
        for (int j = 0; j < n; ++j) {
          out[j] = dm[j] * m[j] * (T(1) - m[j]);  // A_m = σ(·)
          const T bj = m[n + n2 + j];             // B = 2σ(·)
          out[n + n2 + j] = dm[n + n2 + j] * bj * (T(1) - bj / T(2));
        }
        for (int k = 0; k < n2; ++k) L[k] = g_res * a[n + k] + b_res[k];
        sinkhorn_forward(L.data(), n, kSinkhornIters, trace.data());
        for (int a2 = 0; a2 < n; ++a2) {
          for (int s = 0; s < n; ++s) dM[a2 * n + s] = dm[n + s * n + a2];
        }
        sinkhorn_backward(trace.data(), n, kSinkhornIters, dM.data(), dL.data());
        for (int k = 0; k < n2; ++k) out[n + k] = dL[k];
        std::copy(out.begin(), out.end(), e + r * W);
      }
    });
    // Gates, biases and projections: sums over rows, sequential.
    T* dphi_pre = m_.grads_.data() + hp.phi_pre;
    T* dphi_post = m_.grads_.data() + hp.phi_post;
    T* dphi_res = m_.grads_.data() + hp.phi_res;
    T* db_pre = m_.grads_.data() + hp.b_pre;
    T* db_post = m_.grads_.data() + hp.b_post;
    T* db_res = m_.grads_.data() + hp.b_res;
    const T* rms = buf.rms.data();
    for (int64_t r = 0; r < N; ++r) {
      const T* er = e + r * W;
      const T* a = act + r * W;
      for (int j = 0; j < n; ++j) {
        db_pre[j] += er[j];
        m_.grads_[hp.gate_pre] += er[j] * a[j];
        db_post[j] += er[n + n2 + j];
        m_.grads_[hp.gate_post] += er[n + n2 + j] * a[n + n2 + j];
      }
      for (int k = 0; k < n2; ++k) {
        db_res[k] += er[n + k];
        m_.grads_[hp.gate_res] += er[n + k] * a[n + k];
      }
      const T* x = H + r * K;
      for (int64_t c = 0; c < K; ++c) {
        const T xc = x[c] * rms[r];
        for (int j = 0; j < n; ++j) {
          dphi_pre[c * n + j] += xc * g_pre * er[j];
          dphi_post[c * n + j] += xc * g_post * er[n + n2 + j];
        }
        for (int k = 0; k < n2; ++k) dphi_res[c * n2 + k] += xc * g_res * er[n + k];
      }
    }
    // dx̃ = φ (α ⊙ e), then through the RMSNorm: dH += r (dx̃ − x̃ mean(dx̃ ⊙ x̃)).
    const T* phi_pre = m_.params_.data() + hp.phi_pre;
    const T* phi_post = m_.params_.data() + hp.phi_post;
    const T* phi_res = m_.params_.data() + hp.phi_res;
    for_row_shards(N, [&](int64_t, int64_t r0, int64_t r1) {
      std::vector<T> dx(K);
      for (int64_t r = r0; r < r1; ++r) {
        const T* er = e + r * W;
        const T* x = H + r * K;
        const T rs = rms[r];
        T dot = 0;
        for (int64_t c = 0; c < K; ++c) {
          T v = 0;
          for (int j = 0; j < n; ++j) {
            v += phi_pre[c * n + j] * g_pre * er[j] + phi_post[c * n + j] * g_post * er[n + n2 + j];
          }
          for (int k = 0; k < n2; ++k) v += phi_res[c * n2 + k] * g_res * er[n + k];
          dx[c] = v;
          dot += v * x[c] * rs;
        }
        T* out = dH_in + r * K;
        for (int64_t c = 0; c < K; ++c) out[c] += rs * (dx[c] - x[c] * rs * dot / T(K));
      }
    });
  }

  Model<T>& m_;
  T *dH_ = nullptr, *dH_next_ = nullptr;  // dL/dH_{i+1}, dL/dH_i (N, n, D)
};

// Inference: H and H' swapped after each sublayer; h holds the sublayer's input, then the sum
// of the streams it leaves.
template <typename T>
class HyperInference final : public InferenceStream<T> {
 public:
  explicit HyperInference(Model<T>& model) : m_(model) {}

  void declare_buffers(Arena<T>& a, int64_t N, int64_t R) override {
    auto& w = ws();
    const int n = m_.hyper_streams();
    const int64_t W = int64_t{n} * (n + 2);
    const bool mhc = m_.config_.sinkhorn;
    a.declare(w.h, N * width());
    a.declare(w.h_next, N * width());
    a.declare(w.x_rows, R * width());
    for (auto* v : {&w.hyper_H, &w.hyper_H_next}) a.declare(*v, N * n * width());
    a.declare(w.hyper_act, N * W);
    a.declare(w.hyper_mix, N * W);
    a.declare(w.hyper_rms, mhc ? N : 0);
    a.declare(w.hbar, mhc ? 0 : N * n * width());
    a.declare(w.hyper_mean, mhc ? 0 : N * n);
    a.declare(w.hyper_rstd, mhc ? 0 : N * n);
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
    HyperStreams<T>::compute_weights(m_, i, w.hyper_H.data(), b, rows);
    HyperStreams<T>::mix_into_input(m_, w.hyper_H.data(), b.mix, w.h.data(), rows);
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
    HyperStreams<T>::update_streams(m_, w.hyper_H.data(), w.hyper_mix.data(), z,
                                    w.hyper_H_next.data(), rows);
    std::swap(w.hyper_H, w.hyper_H_next);
    HyperStreams<T>::merge_streams(m_, w.hyper_H.data(), w.h_next.data(), rows);
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
