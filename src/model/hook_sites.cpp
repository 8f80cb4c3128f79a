// The forward hooks' sites in the training forward (include/normlab/model/activation_hooks.hpp):
// each offers one named activation and, when a hook changed it, makes the rest of the forward
// continue from the change. Sites that are a buffer of the forward offer it in place; the
// others (q, k, v inside the packed buffer, the scores, a norm's scale) are gathered first and
// written back only when changed, so an identity hook leaves every value bit for bit.
//
// Letters: B batch, T length, N = B·T rows, D width, H heads, dh = D / H, S sublayers.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/kernels/alibi.hpp"
#include "core/kernels/attention.hpp"
#include "core/kernels/norm.hpp"
#include "model/attention_shape.hpp"
#include "model/buffers.hpp"
#include "model/workspace.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

template <typename T>
std::string Model<T>::hook_block(int i) const {
  return fmt::format("blocks.{}.", i / config_.sublayers_per_layer());
}

template <typename T>
std::string Model<T>::hook_kind(int i) const {
  return sublayers_.at(i).is_attention ? "attn" : "mlp";
}

template <typename T>
std::vector<int64_t> Model<T>::hook_shape(int64_t rows, const std::vector<int64_t>& width) const {
  const Workspace& w = *ws_;
  std::vector<int64_t> shape;
  if (rows == w.batch * w.len) {
    shape = {w.batch, w.len};
  } else {
    shape = {rows};
  }
  shape.insert(shape.end(), width.begin(), width.end());
  return shape;
}

template <typename T>
bool Model<T>::offer(const std::string& name, T* values, int64_t rows,
                     const std::vector<int64_t>& width) const {
  if (hooks_ == nullptr || !hooks_->wants(name)) return false;
  return hooks_->visit(name, values, hook_shape(rows, width));
}

template <typename T>
void Model<T>::offer_norm(const std::string& prefix, const NormParams& p, const T* x, T* y, T* mean,
                          T* rstd, int64_t rows) const {
  if (hooks_ == nullptr) return;
  const int D = config_.width;
  const NormWeights<T> weights = norm_weights(params_, p);
  const bool has_scale = weights.kind != NormKind::dyt && weights.kind != NormKind::derf;
  if (has_scale && hooks_->wants(prefix + ".hook_scale")) {
    // TransformerLens's hook_scale is the divisor sqrt(var + eps) = 1/rstd (norm.hpp).
    std::vector<T> scale(rows);
    for (int64_t n = 0; n < rows; ++n) scale[n] = T(1) / rstd[n];
    const std::vector<T> before = scale;
    if (offer(prefix + ".hook_scale", scale.data(), rows, {1})) {
      for (int64_t n = 0; n < rows; ++n) {
        if (std::memcmp(&scale[n], &before[n], sizeof(T)) == 0) continue;
        rstd[n] = T(1) / scale[n];
        norm_apply(weights, x + n * D, y + n * D, RowStats<const T>{mean + n, rstd + n}, {1, D});
      }
    }
  }
  offer(prefix + ".hook_normalized", y, rows, {D});
}

template <typename T>
void Model<T>::offer_qkv(int i, T* qkv) const {
  if (hooks_ == nullptr) return;
  const Workspace& w = *ws_;
  const int64_t N = w.batch * w.len;
  const int D = config_.width, H = config_.heads;
  for (int part = 0; part < 3; ++part) {
    const std::string name = hook_block(i) + "attn." + kQkvHookNames[part];
    if (!hooks_->wants(name)) continue;
    std::vector<T> values = qkv_part(qkv, part, N, D);  // (N, D) = (B, T, H, dh)
    if (!offer(name, values.data(), N, {H, D / H})) continue;
    for (int64_t n = 0; n < N; ++n) {
      std::copy_n(values.data() + n * D, D, qkv + n * 3 * D + part * D);
    }
  }
}

namespace {

// o (N, D) = P · v per head, P (B, H, T, Tp), v in the packed qkv (N, 3D): what attention
// computes from its probabilities (core/kernels/attention.hpp), after a hook changed them; P
// after the step's dropout when it has one.
template <typename T>
void apply_pattern(const AttentionShape& s, const T* qkv, const T* probs, T* o,
                   const AttentionDropout* dropout) {
  const int64_t B = s.batch, len = s.len, Tp = attention_probs_stride(len);
  const int D = s.width, H = s.heads, dh = D / H;
  for (int64_t b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      for (int64_t t = 0; t < len; ++t) {
        const T* p = probs + ((b * H + h) * len + t) * Tp;
        T* out = o + (b * len + t) * D + h * dh;
        std::fill(out, out + dh, T(0));
        for (int64_t k = 0; k < len; ++k) {
          const T* v = qkv + (b * len + k) * 3 * D + 2 * D + h * dh;
          T pk = p[k];
          if (dropout != nullptr) {
            pk = dropout->keeps(b, h, H, len, t, k) ? pk * T(dropout->keep_factor()) : T(0);
          }
          for (int e = 0; e < dh; ++e) out[e] += pk * v[e];
        }
      }
    }
  }
}

}  // namespace

template <typename T>
void Model<T>::offer_attention(int i, const T* qkv, T* probs, T* o,
                               const RelativeLogits<T>* relative) const {
  if (hooks_ == nullptr) return;
  const Workspace& w = *ws_;
  const ModelConfig& c = config_;
  const AttentionShape shape = attention_shape(c, w.batch, w.len);
  const int64_t B = w.batch, len = w.len, N = B * len, Tp = attention_probs_stride(len);
  const int D = c.width, H = c.heads, dh = D / H;
  const std::string block = hook_block(i) + "attn.";
  const int64_t rows = B * H * len;  // (B, H, T) query rows of T keys each
  std::vector<T> square;             // (B, H, T, T)
  bool changed = false;
  if (hooks_->wants(block + "hook_attn_scores")) {
    // S = scale · q·k [+ ALiBi's bias] [scale · Transformer-XL's terms], −inf where a causal
    // query does not see the key (TransformerLens's mask).
    square.assign(rows * len, T(0));
    for (int64_t b = 0; b < B; ++b) {
      for (int h = 0; h < H; ++h) {
        for (int64_t t = 0; t < len; ++t) {
          const T* q = qkv + (b * len + t) * 3 * D + h * dh;
          T* s = square.data() + ((b * H + h) * len + t) * len;
          for (int64_t k = 0; k < len; ++k) {
            if (c.causal && k > t) {
              s[k] = -std::numeric_limits<T>::infinity();
              continue;
            }
            const T* key = qkv + (b * len + k) * 3 * D + D + h * dh;
            T dot = 0;
            for (int e = 0; e < dh; ++e) dot += q[e] * key[e];
            if (relative != nullptr)
              dot += relative_term<T>(*relative, len, D, h * dh, dh, q, key, t, k);
            s[k] = T(shape.scale) * dot;
            if (shape.alibi) s[k] += T(alibi_slope(h, H) * alibi_bias(t, k, c.causal));
          }
        }
      }
    }
    // Changed scores: each row's softmax over every key (the hook's values, as given).
    if (hooks_->visit(block + "hook_attn_scores", square.data(), {B, H, len, len})) {
      changed = true;
      for (int64_t r = 0; r < rows; ++r) {
        const T* s = square.data() + r * len;
        T* p = probs + r * Tp;
        const T m = *std::max_element(s, s + len);
        T sum = 0;
        for (int64_t k = 0; k < len; ++k) {
          p[k] = m == -std::numeric_limits<T>::infinity() ? T(0) : std::exp(s[k] - m);
          sum += p[k];
        }
        for (int64_t k = 0; k < len; ++k) p[k] = sum > 0 ? p[k] / sum : T(0);
      }
    }
  }
  if (hooks_->wants(block + "hook_pattern")) {
    square.resize(rows * len);
    for (int64_t r = 0; r < rows; ++r) std::copy_n(probs + r * Tp, len, square.data() + r * len);
    if (hooks_->visit(block + "hook_pattern", square.data(), {B, H, len, len})) {
      changed = true;
      for (int64_t r = 0; r < rows; ++r) std::copy_n(square.data() + r * len, len, probs + r * Tp);
    }
  }
  if (changed) {
    AttentionDropout drop;
    apply_pattern(shape, qkv, probs, o, attention_dropout(i, drop) ? &drop : nullptr);
  }
  offer(block + "hook_z", o, N, {H, dh});
}

template <typename T>
void Model<T>::offer_stream(int i, T* x) const {
  if (hooks_ == nullptr) return;
  const int64_t N = ws_->batch * ws_->len;
  const int per_layer = config_.sublayers_per_layer();
  if (i > 0 && i % per_layer == 0)
    offer(hook_block(i - 1) + "hook_resid_post", x, N, {config_.width});
  const char* site = i % per_layer == 0 ? "hook_resid_pre" : "hook_resid_mid";
  offer(hook_block(i) + site, x, N, {config_.width});
}

// This file's members for both scalar types (the class is instantiated in model.cpp).
template std::string Model<float>::hook_block(int) const;
template std::vector<int64_t> Model<float>::hook_shape(int64_t, const std::vector<int64_t>&) const;
template std::string Model<float>::hook_kind(int) const;
template bool Model<float>::offer(const std::string&, float*, int64_t,
                                  const std::vector<int64_t>&) const;
template void Model<float>::offer_norm(const std::string&, const NormParams&, const float*, float*,
                                       float*, float*, int64_t) const;
template void Model<float>::offer_qkv(int, float*) const;
template void Model<float>::offer_attention(int, const float*, float*, float*,
                                            const RelativeLogits<float>*) const;
template void Model<float>::offer_stream(int, float*) const;
template std::string Model<double>::hook_block(int) const;
template std::vector<int64_t> Model<double>::hook_shape(int64_t, const std::vector<int64_t>&) const;
template std::string Model<double>::hook_kind(int) const;
template bool Model<double>::offer(const std::string&, double*, int64_t,
                                   const std::vector<int64_t>&) const;
template void Model<double>::offer_norm(const std::string&, const NormParams&, const double*,
                                        double*, double*, double*, int64_t) const;
template void Model<double>::offer_qkv(int, double*) const;
template void Model<double>::offer_attention(int, const double*, double*, double*,
                                             const RelativeLogits<double>*) const;
template void Model<double>::offer_stream(int, double*) const;

}  // namespace normlab
