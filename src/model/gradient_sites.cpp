// The gradient hooks' sites in the training backward (include/normlab/model/activation_hooks.hpp):
// each offers dL/d(one named activation), a copy shaped as the forward hook's. Gradients the
// backward does not form (a norm's scale, the pattern and the scores, which attention_backward
// fuses) are computed here from what the forward kept, only when a hook wants them.
//
// Letters: B batch, T length, N = B·T rows, D width, H heads, dh = D / H.
#include <algorithm>
#include <vector>

#include "core/kernels/attention.hpp"
#include "core/kernels/norm.hpp"
#include "model/buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

template <typename T>
void Model<T>::offer_grad(const std::string& name, const T* d, int64_t rows,
                          const std::vector<int64_t>& width) const {
  if (grad_hooks_ == nullptr || !grad_hooks_->wants(name)) return;
  const std::vector<int64_t> shape = hook_shape(rows, width);
  int64_t count = 1;
  for (int64_t s : shape) count *= s;
  std::vector<T> copy(d, d + count);  // the hook reads; the backward keeps its own
  grad_hooks_->visit(name, copy.data(), shape);
}

template <typename T>
void Model<T>::offer_norm_grad(const std::string& prefix, const NormParams& p, const T* x,
                               const T* mean, const T* rstd, const T* dy, int64_t rows) const {
  if (grad_hooks_ == nullptr) return;
  const int D = config_.width;
  const NormWeights<T> weights = norm_weights(params_, p);
  const bool has_scale = weights.kind != NormKind::dyt && weights.kind != NormKind::derf;
  if (has_scale && grad_hooks_->wants(prefix + ".hook_scale")) {
    // y − b = (x − μ) r g c (g, c where the kind has them); ∂y/∂s = −(y − b) r with s = 1/r.
    const T c = weights.kind == NormKind::scalenorm ? weights.scalars[0] : T(1);
    std::vector<T> d_scale(rows);
    for (int64_t n = 0; n < rows; ++n) {
      T sum = 0;
      for (int d = 0; d < D; ++d) {
        T centred = (x[n * D + d] - mean[n]) * rstd[n] * c;
        if (weights.gain != nullptr) centred *= weights.gain[d];
        sum += dy[n * D + d] * centred;
      }
      d_scale[n] = -rstd[n] * sum;
    }
    offer_grad(prefix + ".hook_scale", d_scale.data(), rows, {1});
  }
  offer_grad(prefix + ".hook_normalized", dy, rows, {D});
}

template <typename T>
void Model<T>::offer_attention_grads(int i, const T* qkv, const T* probs, const T* d_o) const {
  if (grad_hooks_ == nullptr) return;
  const Workspace& w = *ws_;
  const int64_t B = w.batch, len = w.len, Tp = attention_probs_stride(len);
  const int D = config_.width, H = config_.heads, dh = D / H;
  const std::string block = hook_block(i) + "attn.";
  offer_grad(block + "hook_z", d_o, B * len, {H, dh});
  const bool pattern = grad_hooks_->wants(block + "hook_pattern");
  const bool scores = grad_hooks_->wants(block + "hook_attn_scores");
  if (!pattern && !scores) return;
  const int64_t rows = B * H * len;
  std::vector<T> dP(rows * len), dS(rows * len, T(0));  // (B, H, T, T)
  AttentionDropout drop;  // with the step's dropout, ⟨do, v⟩ is the dropped P's gradient
  const bool dropped = attention_dropout(i, drop);
  for (int64_t b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      for (int64_t t = 0; t < len; ++t) {
        const int64_t r = (b * H + h) * len + t;
        const T* d_out = d_o + (b * len + t) * D + h * dh;
        const T* p = probs + r * Tp;
        T expected = 0;  // Σ_k P_k dP_k
        for (int64_t k = 0; k < len; ++k) {
          const T* v = qkv + (b * len + k) * 3 * D + 2 * D + h * dh;
          T dot = 0;
          for (int e = 0; e < dh; ++e) dot += d_out[e] * v[e];
          if (dropped) dot *= T(drop.factor(b, h, H, len, t, k));
          dP[r * len + k] = dot;
          expected += p[k] * dot;
        }
        for (int64_t k = 0; k < len; ++k) dS[r * len + k] = p[k] * (dP[r * len + k] - expected);
      }
    }
  }
  if (scores) grad_hooks_->visit(block + "hook_attn_scores", dS.data(), {B, H, len, len});
  if (pattern) grad_hooks_->visit(block + "hook_pattern", dP.data(), {B, H, len, len});
}

template <typename T>
void Model<T>::offer_qkv_grads(int i, const T* d_qkv) const {
  if (grad_hooks_ == nullptr) return;
  const Workspace& w = *ws_;
  const int64_t N = w.batch * w.len;
  const int D = config_.width, H = config_.heads;
  for (int part = 0; part < 3; ++part) {
    const std::string name = hook_block(i) + "attn." + kQkvHookNames[part];
    if (!grad_hooks_->wants(name)) continue;
    const std::vector<T> d = qkv_part(d_qkv, part, N, D);  // (N, D) = (B, T, H, dh)
    offer_grad(name, d.data(), N, {H, D / H});
  }
}

// This file's members for both scalar types (the class is instantiated in model.cpp).
template void Model<float>::offer_grad(const std::string&, const float*, int64_t,
                                       const std::vector<int64_t>&) const;
template void Model<double>::offer_grad(const std::string&, const double*, int64_t,
                                        const std::vector<int64_t>&) const;
template void Model<float>::offer_norm_grad(const std::string&, const NormParams&, const float*,
                                            const float*, const float*, const float*,
                                            int64_t) const;
template void Model<double>::offer_norm_grad(const std::string&, const NormParams&, const double*,
                                             const double*, const double*, const double*,
                                             int64_t) const;
template void Model<float>::offer_attention_grads(int, const float*, const float*,
                                                  const float*) const;
template void Model<double>::offer_attention_grads(int, const double*, const double*,
                                                   const double*) const;
template void Model<float>::offer_qkv_grads(int, const float*) const;
template void Model<double>::offer_qkv_grads(int, const double*) const;

}  // namespace normlab
