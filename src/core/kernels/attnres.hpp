// Attention Residuals (docs/reference.md §4, docs/attnres.md): a softmax mixture over depth.
//
// Per row n of N, over K sources s_k (each (N, D)), with a pseudo-query w (D) and the gain g (D)
// of an RMSNorm on the keys:
//   r_k = 1 / sqrt(mean_d s_k[d]² + eps)                (res_rstd, computed once per source)
//   ℓ_k = r_k · Σ_d q_d s_k[d],   q = w ⊙ g              (= w · RMSNorm_g(s_k))
//   α   = softmax_k(ℓ),           x = Σ_k α_k s_k
// Backward, given dx (N, D):
//   dα_k = ⟨dx, s_k⟩,   dℓ_k = α_k (dα_k − Σ_m α_m dα_m),  Σ_m α_m dα_m = ⟨dx, x⟩
//   ds_k += α_k dx + dℓ_k r_k (q − s_k r_k ℓ_k / D)      (RMSNorm backward of dℓ_k q)
//   dq = Σ_n Σ_k dℓ_k r_k s_k,   dw += dq ⊙ g,   dg += dq ⊙ w
// The keys RMSNorm_g(s_k) are never stored: ℓ_k is recomputed in the backward from the sources
// and their r_k. Work goes by fixed row shards (core/parallel.hpp) and, inside a shard, source
// by source, so each source is read in one contiguous run; the backward reads each source and
// updates each source gradient once per call. Exponentials are exp_approx (fast_math.hpp).
// Parameter reductions are per-shard partials summed in shard order.
#pragma once

#include <cstdint>

namespace normlab {

// r (N) = 1 / sqrt(mean(s²) + eps) for each row of s (N, D).
template <typename T>
void res_rstd(const T* s, T* r, int64_t N, int D, double eps);

// src, rstd: K pointers to (N, D) sources and their (N) r_k. x (N, D) = the mixture;
// alpha (N, K) = the weights, row-major. x may not alias a source.
template <typename T>
void res_mix_forward(const T* const* src, const T* const* rstd, int K, const T* w, const T* g, T* x,
                     T* alpha, int64_t N, int D);

// The logits that P mixing points give one source s (N, D), whose r (N) is known: out[p] (N)
// row n = r[n] · ⟨q_p, s_n⟩, q: P pointers to q_p = w_p ⊙ g_p (D). The same bits as the logits
// res_mix_forward computes, so a model can compute a source's logits once, for all the points
// that will mix it, as soon as the source is written (it is then read once instead of once per
// point).
template <typename T>
void res_logits(const T* s, const T* r, const T* const* q, T* const* out, int P, int64_t N, int D);

// res_mix_forward with the logits given by res_logits: logits (K, N), source k's row n at
// logits[k·N + n]; they are overwritten (with the exponentials). x and alpha as res_mix_forward,
// with the same bits.
template <typename T>
void res_mix_from_logits(const T* const* src, int K, T* logits, T* x, T* alpha, int64_t N, int D);

// One mixing point of res_mix_backward: its weights α (row n, source k at
// alpha[n·alpha_stride + alpha_col + k]), its output x and the gradient dx (N, D), its query
// and gain and their gradients (D, added to).
template <typename T>
struct ResMixPoint {
  const T* alpha = nullptr;
  int64_t alpha_stride = 0;
  int alpha_col = 0;
  const T* x = nullptr;
  const T* dx = nullptr;
  const T* w = nullptr;
  const T* g = nullptr;
  T* dw = nullptr;
  T* dg = nullptr;
};

// The backward of P mixing points that share the K sources given (each point may have more
// sources, handled by other calls: a point's terms are a sum over its sources, and
// Σ_m α_m dα_m = ⟨dx, x⟩ needs none of them). dsrc: K pointers to (N, D) source gradients,
// added to (+=), distinct from each other and from every dx. α and x as returned by
// res_mix_forward. One call reads each source and updates each source gradient once, however
// many points share it.
template <typename T>
void res_mix_backward(const T* const* src, const T* const* rstd, T* const* dsrc, int K,
                      const ResMixPoint<T>* points, int P, int64_t N, int D);

}  // namespace normlab
