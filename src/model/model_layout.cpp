// The model's parameters: their layout (names, shapes, init, decay, unit-norm axes) as the
// resolved scheme implies it, their initialization and nGPT's weight constraints, and the
// memory estimate checked before activations are allocated.
//
// Letters: V vocabulary, D width, M MLP hidden width, H heads, L layers.
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "core/kernels/attention.hpp"
#include "core/kernels/norm.hpp"
#include "core/parallel.hpp"
#include "model/residual/inference_stream.hpp"
#include "model/residual/qkv_hook.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/workspace.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/core/memory_budget.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

namespace {

// The scalar parameters of a norm kind, in the kernels' order (norm.hpp), with their inits
// (kNormKinds, norm_kind.hpp).
struct NormScalar {
  const char* name;
  double init;
};

std::vector<NormScalar> norm_scalars(NormKind kind, int64_t D) {
  const NormKindRow& row = norm_row(kind);
  std::vector<NormScalar> out;
  for (int i = 0; i < row.scalar_count; ++i) {
    const NormScalarInit& s = row.scalars[i];
    out.push_back(
        {s.name, s.times_sqrt_width ? s.init * std::sqrt(static_cast<double>(D)) : s.init});
  }
  return out;
}

}  // namespace

template <typename T>
Model<T>::Model(const ModelConfig& config) : Model(config, LayoutOnly{}) {
  // Parameters and gradients; workspaces come later, sized by the batch.
  const double bytes = 2.0 * static_cast<double>(layout_.total()) * sizeof(T);
  check_fits_in_memory(
      bytes, fmt::format("the model's {} parameters and their gradients", layout_.total()));
  params_.assign(layout_.total(), T(0));
  grads_.assign(layout_.total(), T(0));
}

template <typename T>
Model<T>::Model(const ModelConfig& config, LayoutOnly) : config_(config) {
  validate(config_);
  scheme_ = resolve_scheme(config_);
  residual_ = make_residual_stream(*this);
  build_layout();
  ws_ = std::make_unique<Workspace>();
  train_qkv_hook_ = make_qkv_hook(*this, true);
  eval_qkv_hook_ = make_qkv_hook(*this, false);
}

double activation_bytes_estimate(const ModelConfig& c, int64_t batch, int64_t len,
                                 size_t value_bytes) {
  Model<float> m(c, Model<float>::LayoutOnly{});
  const int64_t elements =
      m.declare_training_buffers(batch, len, {.listed = false, .count = batch * len});
  return static_cast<double>(elements) * static_cast<double>(value_bytes);
}

double attention_scale(const ModelConfig& c) {
  if (c.qk_norm == QkNorm::l2) return c.beta;
  if (scheme_row(c.scheme).sphere_qk) return c.beta * std::sqrt(static_cast<double>(c.head_dim()));
  return c.beta / std::sqrt(static_cast<double>(c.head_dim()));
}

NgptScales ngpt_scales(const ModelConfig& c) {
  const double root = std::sqrt(static_cast<double>(c.width)), base = 1.0 / root;
  return {.alpha = {.init = base, .factor = c.ngpt_alpha_init / base},
          .s_qk = {.init = base, .factor = 1.0 / base},
          .s_uv = {.init = 1.0, .factor = root},
          .s_z = {.init = base, .factor = 1.0 / base}};
}

ParamLayout param_layout_of(const ModelConfig& config) {
  return Model<float>(config, Model<float>::LayoutOnly{}).layout();
}

template <typename T>
NormParams Model<T>::add_norm(const std::string& prefix, bool active, NormKind kind, int64_t size) {
  NormParams n;
  n.active = active;
  n.kind = kind;
  if (!active) return n;
  const int64_t D = size > 0 ? size : config_.width;
  if (norm_has_gain(kind)) {
    n.gain = layout_.add(
        {.name = prefix + ".weight", .shape = {D}, .init = InitKind::constant, .init_value = 1.0});
  }
  if (norm_has_bias(kind)) {
    n.bias = layout_.add(
        {.name = prefix + ".bias", .shape = {D}, .init = InitKind::constant, .init_value = 0.0});
  }
  // Scalars: "<prefix>.alpha", ".shift", ".scale", shape (1), consecutive. Like the gains and
  // biases they do not decay (decay is for matrices).
  const std::vector<NormScalar> scalars = norm_scalars(kind, D);
  if (static_cast<int>(scalars.size()) != norm_scalar_count(kind)) {
    throw std::logic_error("add_norm: the scalars of norm " + to_string(kind) +
                           " disagree with the kernel's count");
  }
  for (const NormScalar& scalar : scalars) {
    const int64_t offset = layout_.add({.name = prefix + "." + scalar.name,
                                        .shape = {1},
                                        .init = InitKind::constant,
                                        .init_value = scalar.init});
    if (n.scalars < 0) n.scalars = offset;
  }
  return n;
}

// A learnable factor of the residual add (LayerScale: a vector; ReZero: a scalar), initialized
// to the placement's value and not decayed; -1 for a constant.
template <typename T>
int64_t Model<T>::add_scale(const std::string& name, const ScaleSpec& spec) {
  if (spec.kind != ScaleKind::vector && spec.kind != ScaleKind::scalar) return -1;
  const int64_t size = spec.kind == ScaleKind::vector ? config_.width : 1;
  return layout_.add(
      {.name = name, .shape = {size}, .init = InitKind::constant, .init_value = spec.value});
}

template <typename T>
void Model<T>::build_layout() {
  const ModelConfig& c = config_;
  const int64_t V = c.vocab, D = c.width, M = c.mlp_hidden();
  const bool ngpt = scheme_.unit_norm_weights;
  const UnitNormAxis rows = ngpt ? UnitNormAxis::last : UnitNormAxis::none;
  const UnitNormAxis cols = ngpt ? UnitNormAxis::first : UnitNormAxis::none;
  // The std of a matrix of fan-in n: init_std, or 1/√n with weight_init = truncated_fan_in
  // (Haiku's hk.Linear default, w_init = TruncatedNormal(1/√n)), which also truncates every
  // matrix and embedding (InitKind::truncated_normal). The embeddings take embed_init_std when
  // it is set. Relative encoding's u and v stay untruncated N(0, 0.02²), as the reference's
  // hk.initializers.RandomNormal(0.02).
  const bool fan_in = c.weight_init == WeightInit::truncated_fan_in;
  const InitKind drawn = fan_in ? InitKind::truncated_normal : InitKind::normal;
  auto matrix_std = [&](int64_t n) {
    return fan_in ? 1.0 / std::sqrt(static_cast<double>(n)) : c.init_std;
  };
  // GPT-2 scaled init of the projections that write into the residual stream; DeepNorm
  // replaces it with its own (8L)^(-1/4) on values, outputs and the MLP.
  auto residual_std = [&](int64_t n) {
    const double std = matrix_std(n);
    return (c.scaled_residual_init && scheme_.gpt2_scaled_init) ? std / std::sqrt(2.0 * c.layers)
                                                                : std;
  };
  const double std = matrix_std(D);  // q, k, v, W_R, MLP up and the unembedding: fan-in D
  const double embed_std = c.embed_init_std > 0 ? c.embed_init_std : c.init_std;
  const double branch = scheme_.branch_init_scale;

  embed_ = layout_.add({.name = "embed.weight",
                        .shape = {V, D},
                        .decay = true,
                        .init = drawn,
                        .init_value = embed_std,
                        .unit_norm = rows});
  if (c.pos == PosEncoding::learned) {
    pos_ = layout_.add({.name = "pos.weight",
                        .shape = {c.max_len, D},
                        .decay = true,
                        .init = drawn,
                        .init_value = embed_std,
                        .unit_norm = rows});
  }
  embed_norm_ = add_norm("embed_norm", scheme_.embed_norm, c.norm);

  for (int i = 0; i < static_cast<int>(scheme_.sublayers.size()); ++i) {
    const SublayerSlots& slots = scheme_.sublayers[i];
    const int layer = i / c.sublayers_per_layer();
    const bool attention = i % c.sublayers_per_layer() == 0;
    const std::string prefix = fmt::format("layers.{}.{}", layer, attention ? "attn" : "mlp");
    SublayerParams p;
    p.is_attention = attention;
    residual_->lay_out_input(i, prefix, p);
    p.norm_in = add_norm(prefix + ".norm_in", slots.norm_in, slots.kind_in);
    if (attention) {
      p.w_in = layout_.add({.name = prefix + ".q.weight",
                            .shape = {D, D},
                            .decay = true,
                            .init = drawn,
                            .init_value = std,
                            .unit_norm = rows});
      layout_.add({.name = prefix + ".k.weight",
                   .shape = {D, D},
                   .decay = true,
                   .init = drawn,
                   .init_value = std,
                   .unit_norm = rows});
      layout_.add({.name = prefix + ".v.weight",
                   .shape = {D, D},
                   .decay = true,
                   .init = drawn,
                   .init_value = std * branch,
                   .unit_norm = rows});
      p.w_out = layout_.add({.name = prefix + ".o.weight",
                             .shape = {D, D},
                             .decay = true,
                             .init = drawn,
                             .init_value = residual_std(D) * branch,
                             .unit_norm = cols});
      // Transformer-XL's relative terms (core/kernels/relative.hpp): u and v drawn as the
      // reference draws them, N(0, 0.02²); W_R as q and k.
      if (c.pos == PosEncoding::relative) {
        p.rel_u = layout_.add({.name = prefix + ".rel_u", .shape = {D}, .init_value = 0.02});
        p.rel_v = layout_.add({.name = prefix + ".rel_v", .shape = {D}, .init_value = 0.02});
        p.rel_w = layout_.add({.name = prefix + ".rel.weight",
                               .shape = {D, D},
                               .decay = true,
                               .init = drawn,
                               .init_value = std});
      }
      // Per-head norms over dh features (docs/checkpoint.md), then the l2 QK-norm's s_h (H);
      // none of them decays.
      const HeadNorms& hn = scheme_.head_norms;
      p.q_norm = add_norm(prefix + ".q_norm", hn.q, hn.kind, c.head_dim());
      p.k_norm = add_norm(prefix + ".k_norm", hn.k, hn.kind, c.head_dim());
      p.v_norm = add_norm(prefix + ".v_norm", hn.v, hn.kind, c.head_dim());
      if (hn.learned_scale) {
        p.qk_scale = layout_.add({.name = prefix + ".qk_scale",
                                  .shape = {c.heads},
                                  .init = InitKind::constant,
                                  .init_value = hn.scale_init});
      }
      if (scheme_.sphere_qk) {  // nGPT's s_qk, stored (ngpt_scales)
        p.s_qk = layout_.add({.name = prefix + ".s_qk",
                              .shape = {D},
                              .init = InitKind::constant,
                              .init_value = ngpt_scales(c).s_qk.init});
      }
    } else {
      // mlp_bias: each projection's bias follows its weight; constant 0, they draw nothing
      // from the RNG, so every other tensor keeps its values.
      auto bias = [&](const char* name, int64_t size) {
        if (!c.mlp_bias) return int64_t{-1};
        return layout_.add({.name = prefix + name,
                            .shape = {size},
                            .init = InitKind::constant,
                            .init_value = 0.0});
      };
      p.w_in = layout_.add({.name = prefix + ".up.weight",
                            .shape = {M, D},
                            .decay = true,
                            .init = drawn,
                            .init_value = std * branch,
                            .unit_norm = rows});
      p.b_in = bias(".up.bias", M);
      p.w_out = layout_.add({.name = prefix + ".down.weight",
                             .shape = {D, M},
                             .decay = true,
                             .init = drawn,
                             .init_value = residual_std(M) * branch,
                             .unit_norm = cols});
      p.b_out = bias(".down.bias", D);
      if (scheme_.mlp_scale) {  // nGPT's s_uv, stored (ngpt_scales)
        p.s_uv = layout_.add({.name = prefix + ".s_uv",
                              .shape = {M},
                              .init = InitKind::constant,
                              .init_value = ngpt_scales(c).s_uv.init});
      }
    }
    p.norm_out = add_norm(prefix + ".norm_out", slots.norm_out, slots.kind_out);
    p.norm_post = add_norm(prefix + ".norm_post", slots.norm_post, slots.kind_post);
    p.residual_scale = add_scale(prefix + ".residual_scale", slots.residual);
    p.branch_scale = add_scale(prefix + ".branch_scale", slots.branch);
    if (slots.interpolate) {
      p.alpha = layout_.add({.name = prefix + ".alpha",
                             .shape = {D},
                             .init = InitKind::constant,
                             .init_value = ngpt_scales(c).alpha.init});
    }
    sublayers_.push_back(p);
  }
  residual_->lay_out_output();
  final_norm_ = add_norm("final_norm", scheme_.final_norm, c.norm);
  if (c.tied) {
    unembed_ = embed_;
  } else {
    unembed_ = layout_.add({.name = "unembed.weight",
                            .shape = {V, D},
                            .decay = true,
                            .init = drawn,
                            .init_value = std,
                            .unit_norm = rows});
  }
  if (c.readout_bias) {
    unembed_bias_ = layout_.add(
        {.name = "unembed.bias", .shape = {V}, .init = InitKind::constant, .init_value = 0.0});
  }
  if (scheme_.logit_scale) {
    // nGPT's logits are cosines in [-1, 1], times a learnable per-token s_z (the reference's:
    // 1 at init; stored as ngpt_scales says).
    logit_scale_ = layout_.add({.name = "logit_scale",
                                .shape = {V},
                                .init = InitKind::constant,
                                .init_value = ngpt_scales(c).s_z.init});
  }
}

// Hyper-connections' weights of sublayer i (docs/schemes.md, "Hyper-connections"; tensors
// docs/checkpoint.md). None is weight-decayed. HC: A_m = e_{i mod n}, A_r = I, B = 1, the
// dynamic projections 0 and their scales 0.01 (the paper's). mHC: the projections 0, the gates
// 0.01, and biases with H_pre ≈ e_{i mod n} / 2, H_post = 1 and H_res ≈ I (normlab's choice).
template <typename T>
void Model<T>::add_hyper(const std::string& prefix, int i, HyperParams& hp) {
  const int64_t n = config_.streams, D = config_.width;
  const int64_t first = i % n;  // the stream sublayer i reads at init
  auto constant = [&](const std::string& name, std::vector<int64_t> shape, double value) {
    return layout_.add({.name = prefix + "." + name,
                        .shape = shape,
                        .init = InitKind::constant,
                        .init_value = value});
  };
  auto values = [&](const std::string& name, std::vector<int64_t> shape, std::vector<double> v) {
    return layout_.add({.name = prefix + "." + name,
                        .shape = shape,
                        .init = InitKind::values,
                        .init_values = std::move(v)});
  };
  if (!config_.sinkhorn) {
    hp.norm = add_norm(prefix + ".norm", true, config_.norm);
    std::vector<double> alpha(n * (n + 1), 0.0);
    alpha[first * (n + 1)] = 1.0;
    for (int64_t s = 0; s < n; ++s) alpha[s * (n + 1) + 1 + s] = 1.0;
    hp.static_alpha = values("static_alpha", {n, n + 1}, alpha);
    hp.static_beta = constant("static_beta", {n}, 1.0);
    hp.dynamic_alpha = constant("dynamic_alpha_fn", {D, n + 1}, 0.0);
    hp.alpha_scale = constant("dynamic_alpha_scale", {1}, 0.01);
    hp.dynamic_beta = constant("dynamic_beta_fn", {D}, 0.0);
    hp.beta_scale = constant("dynamic_beta_scale", {1}, 0.01);
    return;
  }
  constexpr double kOff = -8.0;  // a logit whose weight is about 3e-4 (tokenbender's mHC init)
  hp.phi_pre = constant("phi_pre", {n * D, n}, 0.0);
  hp.phi_post = constant("phi_post", {n * D, n}, 0.0);
  hp.phi_res = constant("phi_res", {n * D, n * n}, 0.0);
  hp.gate_pre = constant("alpha_pre", {1}, 0.01);
  hp.gate_post = constant("alpha_post", {1}, 0.01);
  hp.gate_res = constant("alpha_res", {1}, 0.01);
  std::vector<double> pre(n, kOff);
  pre[first] = 0.0;
  hp.b_pre = values("b_pre", {n}, pre);
  hp.b_post = constant("b_post", {n}, 0.0);
  std::vector<double> res(n * n, kOff);
  for (int64_t s = 0; s < n; ++s) res[s * n + s] = 0.0;
  hp.b_res = values("b_res", {n, n}, res);
}

template <typename T>
void Model<T>::init(uint64_t seed) {
  Rng rng(seed);
  // The truncated normal by rejection: z = rng.normal() redrawn while |z| > 2, then z·std.
  // Its density is φ(z) / (Φ(2) − Φ(−2)) on [−2, 2], that of jax.random.truncated_normal(−2, 2)
  // which Haiku's TruncatedNormal scales by std without a correction, so its std is
  // std·√(1 − 4φ(2) / (Φ(2) − Φ(−2))) = 0.8796·std. About 4.6% of the draws are redrawn.
  auto truncated = [&rng] {
    double z = rng.normal();
    while (std::abs(z) > 2.0) z = rng.normal();
    return z;
  };
  for (const TensorSpec& t : layout_.tensors()) {
    T* p = params_.data() + t.offset;
    for (int64_t i = 0; i < t.size; ++i) {
      p[i] = t.init == InitKind::normal             ? T(rng.normal() * t.init_value)
             : t.init == InitKind::truncated_normal ? T(truncated() * t.init_value)
             : t.init == InitKind::values           ? T(t.init_values.at(i))
                                                    : T(t.init_value);
    }
  }
  apply_weight_constraints();
}

template <typename T>
void Model<T>::apply_weight_constraints() {
  for (const TensorSpec& t : layout_.tensors()) {
    if (t.unit_norm == UnitNormAxis::none) continue;
    T* p = params_.data() + t.offset;
    const int64_t rows = t.shape[0], cols = t.shape[1];
    if (t.unit_norm == UnitNormAxis::last) {
      for (int64_t r = 0; r < rows; ++r) {
        T ss = 0;
        for (int64_t k = 0; k < cols; ++k) ss += p[r * cols + k] * p[r * cols + k];
        const T inv = T(1) / std::sqrt(ss + T(1e-20));
        for (int64_t k = 0; k < cols; ++k) p[r * cols + k] *= inv;
      }
    } else {
      for (int64_t k = 0; k < cols; ++k) {
        T ss = 0;
        for (int64_t r = 0; r < rows; ++r) ss += p[r * cols + k] * p[r * cols + k];
        const T inv = T(1) / std::sqrt(ss + T(1e-20));
        for (int64_t r = 0; r < rows; ++r) p[r * cols + k] *= inv;
      }
    }
  }
}

template <typename T>
void Model<T>::zero_grads() {
  parallel_zero(grads_.data(), static_cast<int64_t>(grads_.size()));
}

// This file's members for both scalar types (the class itself is instantiated in model.cpp).
template Model<float>::Model(const ModelConfig&);
template Model<double>::Model(const ModelConfig&);
template Model<float>::Model(const ModelConfig&, LayoutOnly);
template Model<double>::Model(const ModelConfig&, LayoutOnly);
template NormParams Model<float>::add_norm(const std::string&, bool, NormKind, int64_t);
template NormParams Model<double>::add_norm(const std::string&, bool, NormKind, int64_t);
template int64_t Model<float>::add_scale(const std::string&, const ScaleSpec&);
template int64_t Model<double>::add_scale(const std::string&, const ScaleSpec&);
template void Model<float>::add_hyper(const std::string&, int, HyperParams&);
template void Model<double>::add_hyper(const std::string&, int, HyperParams&);
template void Model<float>::build_layout();
template void Model<double>::build_layout();
template void Model<float>::init(uint64_t);
template void Model<double>::init(uint64_t);
template void Model<float>::apply_weight_constraints();
template void Model<double>::apply_weight_constraints();
template void Model<float>::zero_grads();
template void Model<double>::zero_grads();

}  // namespace normlab
