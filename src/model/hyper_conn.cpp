// Hyper-connections (docs/schemes.md, "Hyper-connections"; ResidualMode::hyper). Each token
// carries n streams H = (H_0 .. H_{n−1}) of width D, all the embedding at first. Sublayer i
// reads h = Σ_s A_m[s] H_s, runs its pre-norm branch z = f(N_in(h)) (sublayer_forward.cpp), and
// writes H'_j = B[j] z + Σ_s A_r[s][j] H_s; the output is Σ_j H_j. The weights depend on H:
//   HC (arXiv 2409.19606, dynamic):  H̄_s = N(H_s),
//       [A_m | A_r][s] = static_alpha[s] + s_α tanh(H̄_s W_α),  B[s] = static_beta[s] + s_β tanh(H̄_s
//       w_β)
//   mHC (arXiv 2512.24880, `sinkhorn`): x̃ = RMSNorm(vec H) (nD, no gain),
//       A_m = σ(α_pre x̃φ_pre + b_pre),  B = 2σ(α_post x̃φ_post + b_post),
//       M = Sinkhorn-Knopp(α_res mat(x̃φ_res) + b_res),  H'_j = … + Σ_s M[j][s] H_s (A_r = Mᵀ).
// The forward pieces serve training and inference; the backward pieces the training pass.
//
// Letters: N = B·T rows, n streams, D width, S sublayers, W = n(n+2) weights per row.
#include "model/hyper_conn.hpp"
#include "model/residual/residual_stream.hpp"

#include <algorithm>
#include <cmath>

#include "core/kernels/norm.hpp"
#include "core/parallel.hpp"
#include "model/buffers.hpp"
#include "model/sublayer_buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/model.hpp"

namespace normlab {

template <typename T>
void sinkhorn_forward(const T* L, int n, int iters, T* trace) {
  const int n2 = n * n;
  T top = L[0];
  for (int k = 1; k < n2; ++k) top = std::max(top, L[k]);
  for (int k = 0; k < n2; ++k) trace[k] = std::exp(L[k] - top);
  for (int step = 1; step <= 2 * iters; ++step) {
    const T* X = trace + (step - 1) * n2;
    T* Y = trace + step * n2;
    const bool rows = step % 2 == 1;
    for (int a = 0; a < n; ++a) {
      T sum = 0;
      for (int b = 0; b < n; ++b) sum += rows ? X[a * n + b] : X[b * n + a];
      for (int b = 0; b < n; ++b) {
        const int k = rows ? a * n + b : b * n + a;
        Y[k] = X[k] / sum;
      }
    }
  }
}

template <typename T>
void sinkhorn_backward(const T* trace, int n, int iters, const T* dM, T* dL) {
  const int n2 = n * n;
  std::vector<T> d(dM, dM + n2), dprev(n2);
  for (int step = 2 * iters; step >= 1; --step) {
    const T* X = trace + (step - 1) * n2;
    const T* Y = trace + step * n2;
    const bool rows = step % 2 == 1;
    // Y = X / s along a row (or column): dX = (dY − Σ dY ⊙ Y) / s.
    for (int a = 0; a < n; ++a) {
      T sum = 0, dot = 0;
      for (int b = 0; b < n; ++b) {
        const int k = rows ? a * n + b : b * n + a;
        sum += X[k];
        dot += d[k] * Y[k];
      }
      for (int b = 0; b < n; ++b) {
        const int k = rows ? a * n + b : b * n + a;
        dprev[k] = (d[k] - dot) / sum;
      }
    }
    std::swap(d, dprev);
  }
  // M_0 = exp(L − max L): the max is a common factor every normalization removes.
  for (int k = 0; k < n2; ++k) dL[k] = d[k] * trace[k];
}

namespace {

// One pass over D values of an update's gradient g: y += a·g, and returns ⟨x, g⟩ (the
// gradient of the coefficient a when the update added a·x).
template <typename T>
T add_scaled_and_dot(T a, const T* g, const T* x, T* y, int D) {
  T dot = 0;
  for (int d = 0; d < D; ++d) {
    y[d] += a * g[d];
    dot += x[d] * g[d];
  }
  return dot;
}

template <typename T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

}  // namespace

template <typename T>
void Model<T>::hyper_weights(int i, const T* H, const HyperBuffers<T>& b, int64_t rows) const {
  const HyperParams& hp = sublayers_[i].hc;
  const int n = hyper_streams(), D = config_.width;
  const int W = n * (n + 2);
  if (!config_.sinkhorn) {
    norm_forward(norm_weights(params_, hp.norm), H, b.hbar, {b.mean, b.rstd}, {rows * n, D},
                 config_.norm_eps);
    const T* Sa = params_.data() + hp.static_alpha;
    const T* Sb = params_.data() + hp.static_beta;
    const T* Wa = params_.data() + hp.dynamic_alpha;
    const T* Wb = params_.data() + hp.dynamic_beta;
    const T sa = params_[hp.alpha_scale], sb = params_[hp.beta_scale];
    for_row_shards(rows, [&](int64_t, int64_t r0, int64_t r1) {
      std::vector<T> acc(n + 2);
      for (int64_t r = r0; r < r1; ++r) {
        T* act = b.act + r * W;
        T* mix = b.mix + r * W;
        for (int s = 0; s < n; ++s) {
          const T* hb = b.hbar + (r * n + s) * D;
          std::fill(acc.begin(), acc.end(), T(0));
          for (int d = 0; d < D; ++d) {
            for (int c = 0; c <= n; ++c) acc[c] += hb[d] * Wa[d * (n + 1) + c];
            acc[n + 1] += hb[d] * Wb[d];
          }
          for (int c = 0; c <= n; ++c) act[s * (n + 1) + c] = std::tanh(acc[c]);
          act[n * (n + 1) + s] = std::tanh(acc[n + 1]);
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
  const T* phi_pre = params_.data() + hp.phi_pre;
  const T* phi_post = params_.data() + hp.phi_post;
  const T* phi_res = params_.data() + hp.phi_res;
  const T g_pre = params_[hp.gate_pre], g_post = params_[hp.gate_post],
          g_res = params_[hp.gate_res];
  const T* b_pre = params_.data() + hp.b_pre;
  const T* b_post = params_.data() + hp.b_post;
  const T* b_res = params_.data() + hp.b_res;
  const T eps = T(config_.norm_eps);
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

template <typename T>
void Model<T>::hyper_input(const T* H, const T* mix, T* h, int64_t rows) const {
  const int n = hyper_streams(), D = config_.width;
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

template <typename T>
void Model<T>::hyper_update(const T* H, const T* mix, const T* z, T* H_out, int64_t rows) const {
  const int n = hyper_streams(), D = config_.width;
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

template <typename T>
void Model<T>::hyper_merge(const T* H, T* h, int64_t rows) const {
  const int n = hyper_streams(), D = config_.width;
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

template <typename T>
void Model<T>::size_hyper(int64_t N) {
  Workspace& w = *ws_;
  const int S = num_sublayers();
  const int64_t n = hyper_streams(), D = config_.width;
  const int64_t W = n * (n + 2);
  w.hyper_H.resize(S + 1);
  for (auto& H : w.hyper_H) grow(H, N * n * D);
  w.hyper.resize(S);
  for (auto& s : w.hyper) {
    if (config_.sinkhorn) {
      grow(s.rms, N);
    } else {
      grow(s.hbar, N * n * D);
      grow(s.mean, N * n);
      grow(s.rstd, N * n);
    }
    grow(s.act, N * W);
    grow(s.mix, N * W);
  }
  for (auto* v : {&w.d_H_a, &w.d_H_b, &w.d_hbar}) grow(*v, N * n * D);
  grow(w.d_mix, N * W);
  grow(w.hyper_dz, N * D);
}

template <typename T>
HyperBuffers<T> Model<T>::hyper_buffers(int i) {
  auto& s = ws_->hyper.at(i);
  return {.hbar = data_or_null(s.hbar),
          .mean = data_or_null(s.mean),
          .rstd = data_or_null(s.rstd),
          .act = data_or_null(s.act),
          .rms = data_or_null(s.rms),
          .mix = data_or_null(s.mix)};
}

template <typename T>
BranchGradient<T> Model<T>::hyper_update_backward(int i, const T* dH_out, T* dH_in) {
  Workspace& w = *ws_;
  const int64_t N = w.batch * w.len;
  const int n = hyper_streams(), D = config_.width;
  const int W = n * (n + 2);
  const T* H = w.hyper_H[i].data();
  const T* mix = w.hyper[i].mix.data();
  const auto& sub = w.subs[i];
  const T* z = scheme_.sublayers[i].norm_out ? sub.z.data() : sub.y.data();
  T* dz = w.hyper_dz.data();
  T* d_mix = w.d_mix.data();
  // H'_j = B[j] z + Σ_s A_r[s][j] H_s.
  for_row_shards(N, [&](int64_t, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* m = mix + r * W;
      T* dm = d_mix + r * W;
      const T* zr = z + r * D;
      T* dzr = dz + r * D;
      std::fill(dzr, dzr + D, T(0));
      for (int j = 0; j < n; ++j) {
        const T* g = dH_out + (r * n + j) * D;
        const T bj = m[n + n * n + j];
        dm[n + n * n + j] = add_scaled_and_dot(bj, g, zr, dzr, D);
      }
      for (int s = 0; s < n; ++s) {
        const T* Hs = H + (r * n + s) * D;
        T* dHs = dH_in + (r * n + s) * D;
        std::fill(dHs, dHs + D, T(0));
        for (int j = 0; j < n; ++j) {
          const T* g = dH_out + (r * n + j) * D;
          const T a = m[n + s * n + j];
          dm[n + s * n + j] = add_scaled_and_dot(a, g, Hs, dHs, D);
        }
      }
    }
  });
  // z = f(N_in(h)): dh from dz (the slots' add is not used: no residual path).
  T* dh = w.d_stream_b.data();
  const T* d_branch = add_backward(i, w.stream[i].data(), dz, dh, false);
  return {.v = w.stream[i].data(), .dz = d_branch, .d_v = dh};
}

template <typename T>
void Model<T>::hyper_input_backward(int i, T* dH_in) {
  Workspace& w = *ws_;
  const int64_t N = w.batch * w.len;
  const int n = hyper_streams(), D = config_.width;
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
  hyper_weights_backward(i, d_mix, dH_in);
}

template <typename T>
void Model<T>::hyper_weights_backward(int i, const T* d_mix, T* dH_in) {
  Workspace& w = *ws_;
  const HyperParams& hp = sublayers_[i].hc;
  const auto& buf = w.hyper[i];
  const int64_t N = w.batch * w.len;
  const int n = hyper_streams(), D = config_.width;
  const int W = n * (n + 2);
  const T* act = buf.act.data();
  const T* H = w.hyper_H[i].data();
  // e (N, W): the gradient of the pre-activations, in the layout of act.
  T* e = w.d_mix.data();  // overwritten in place, row by row (d_mix may alias it)
  if (!config_.sinkhorn) {
    const T* Wa = params_.data() + hp.dynamic_alpha;
    const T* Wb = params_.data() + hp.dynamic_beta;
    const T sa = params_[hp.alpha_scale], sb = params_[hp.beta_scale];
    T* dSa = grads_.data() + hp.static_alpha;
    T* dSb = grads_.data() + hp.static_beta;
    T& dsa = grads_[hp.alpha_scale];
    T& dsb = grads_[hp.beta_scale];
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
    // W_α, w_β: Σ over rows and streams of H̄ ⊗ e, sequential.
    const T* hbar = buf.hbar.data();
    T* dWa = grads_.data() + hp.dynamic_alpha;
    T* dWb = grads_.data() + hp.dynamic_beta;
    for (int64_t r = 0; r < N; ++r) {
      const T* er = e + r * W;
      for (int s = 0; s < n; ++s) {
        const T* hb = hbar + (r * n + s) * D;
        for (int d = 0; d < D; ++d) {
          for (int c = 0; c <= n; ++c) dWa[d * (n + 1) + c] += hb[d] * er[s * (n + 1) + c];
          dWb[d] += hb[d] * er[n * (n + 1) + s];
        }
      }
    }
    // dH̄, then through N into dH.
    T* dhbar = w.d_hbar.data();
    for_row_shards(N, [&](int64_t, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* er = e + r * W;
        for (int s = 0; s < n; ++s) {
          T* out = dhbar + (r * n + s) * D;
          for (int d = 0; d < D; ++d) {
            T v = er[n * (n + 1) + s] * Wb[d];
            for (int c = 0; c <= n; ++c) v += er[s * (n + 1) + c] * Wa[d * (n + 1) + c];
            out[d] = v;
          }
        }
      }
    });
    norm_backward(norm_weights(params_, hp.norm), H, {buf.mean.data(), buf.rstd.data()}, dhbar,
                  dH_in, norm_grads(grads_, hp.norm), {N * n, D});
    return;
  }
  // mHC.
  const int n2 = n * n;
  const int64_t K = int64_t{n} * D;
  const T g_pre = params_[hp.gate_pre], g_post = params_[hp.gate_post],
          g_res = params_[hp.gate_res];
  const T* b_res = params_.data() + hp.b_res;  // the backward needs only the res biases
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
  T* dphi_pre = grads_.data() + hp.phi_pre;
  T* dphi_post = grads_.data() + hp.phi_post;
  T* dphi_res = grads_.data() + hp.phi_res;
  T* db_pre = grads_.data() + hp.b_pre;
  T* db_post = grads_.data() + hp.b_post;
  T* db_res = grads_.data() + hp.b_res;
  const T* rms = buf.rms.data();
  for (int64_t r = 0; r < N; ++r) {
    const T* er = e + r * W;
    const T* a = act + r * W;
    for (int j = 0; j < n; ++j) {
      db_pre[j] += er[j];
      grads_[hp.gate_pre] += er[j] * a[j];
      db_post[j] += er[n + n2 + j];
      grads_[hp.gate_post] += er[n + n2 + j] * a[n + n2 + j];
    }
    for (int k = 0; k < n2; ++k) {
      db_res[k] += er[n + k];
      grads_[hp.gate_res] += er[n + k] * a[n + k];
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
  const T* phi_pre = params_.data() + hp.phi_pre;
  const T* phi_post = params_.data() + hp.phi_post;
  const T* phi_res = params_.data() + hp.phi_res;
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

// This file's members for both scalar types (the class itself is instantiated in model.cpp).
template void sinkhorn_forward<float>(const float*, int, int, float*);
template void sinkhorn_forward<double>(const double*, int, int, double*);
template void sinkhorn_backward<float>(const float*, int, int, const float*, float*);
template void sinkhorn_backward<double>(const double*, int, int, const double*, double*);
template void Model<float>::hyper_weights(int, const float*, const HyperBuffers<float>&,
                                          int64_t) const;
template void Model<double>::hyper_weights(int, const double*, const HyperBuffers<double>&,
                                           int64_t) const;
template void Model<float>::hyper_input(const float*, const float*, float*, int64_t) const;
template void Model<double>::hyper_input(const double*, const double*, double*, int64_t) const;
template void Model<float>::hyper_update(const float*, const float*, const float*, float*,
                                         int64_t) const;
template void Model<double>::hyper_update(const double*, const double*, const double*, double*,
                                          int64_t) const;
template void Model<float>::hyper_merge(const float*, float*, int64_t) const;
template void Model<double>::hyper_merge(const double*, double*, int64_t) const;
template void Model<float>::size_hyper(int64_t);
template void Model<double>::size_hyper(int64_t);
template HyperBuffers<float> Model<float>::hyper_buffers(int);
template HyperBuffers<double> Model<double>::hyper_buffers(int);
template BranchGradient<float> Model<float>::hyper_update_backward(int, const float*, float*);
template BranchGradient<double> Model<double>::hyper_update_backward(int, const double*, double*);
template void Model<float>::hyper_input_backward(int, float*);
template void Model<double>::hyper_input_backward(int, double*);
template void Model<float>::hyper_weights_backward(int, const float*, float*);
template void Model<double>::hyper_weights_backward(int, const double*, double*);

}  // namespace normlab
