#include "normlab/model/scheme_table.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <stdexcept>

namespace normlab {
namespace {

// Presets that do not depend on the config.
template <const char* Text>
std::string fixed(const ModelConfig&) {
  return Text;
}
constexpr char kPre[] = "all: in";
constexpr char kPost[] = "all: post";
constexpr char kPeri[] = "all: in+out";
constexpr char kPostAttn[] = "attn: out";
constexpr char kNgpt[] = "all: out+post";
constexpr char kSqrtScaling[] = "all: in, branch=1/sqrt(l+1)";
constexpr char kPreAndPost[] = "all: in+post";
constexpr char kReordered[] = "all: out";
constexpr char kLayerNormScaling[] = "all: in, input=1/sqrt(l+1)";
constexpr char kLayerScale[] = "all: in, branch=vector(0.1)";
constexpr char kReZero[] = "all: none, branch=scalar(0)";
constexpr char kHybridNorm[] = "attn: post";
constexpr char kNothing[] = "";

// mix(k): pre everywhere, then post on the layers l < k.
std::string mix_placement(const ModelConfig& c) {
  return fmt::format("all: in; all[0:{}]: post", c.mix_layers);
}

// DeepNorm: x scaled by (2L)^(1/4) in the add; 17 digits give the double back exactly.
std::string deepnorm_placement(const ModelConfig& c) {
  return fmt::format("all: post, residual={:.17g}", std::pow(2.0 * c.layers, 0.25));
}

// SiameseNorm: f reads N_in(x + N(y)); x gains z / c_l with c_l = sqrt(2(l+1)), l the layer
// (both sublayers of a layer share it). The shortest form gives each double back exactly.
std::string siamesenorm_placement(const ModelConfig& c) {
  std::string text = "all: in";
  for (int l = 0; l < c.layers; ++l) {
    text += fmt::format("; all[{}:{}]: branch={}", l, l + 1, 1.0 / std::sqrt(2.0 * (l + 1)));
  }
  return text;
}

const std::array kSchemeRows = {
    SchemeRow{.scheme = Scheme::pre,
              .name = "pre",
              .block = "h = h + f(N(h))",
              .placement = fixed<kPre>,
              .norm_none_allowed = true},
    SchemeRow{.scheme = Scheme::post,
              .name = "post",
              .block = "h = N(h + f(h))",
              .placement = fixed<kPost>,
              .final_norm = false},
    SchemeRow{.scheme = Scheme::peri,
              .name = "peri",
              .block = "h = h + N_out(f(N_in(h)))",
              .placement = fixed<kPeri>},
    SchemeRow{.scheme = Scheme::peri_init,
              .name = "peri_init",
              .block = "peri plus a norm on the token embeddings",
              .placement = fixed<kPeri>,
              .embed_norm = true},
    SchemeRow{.scheme = Scheme::post_attn,
              .name = "post_attn",
              .block = "h = h + N(attn(h)); MLP h = h + mlp(h)",
              .placement = fixed<kPostAttn>},
    SchemeRow{.scheme = Scheme::mix,
              .name = "mix",
              .block = "post for layers l < k, pre after",
              .placement = mix_placement,
              .number = {&ModelConfig::mix_layers, "mix_layers", "--mix-layers", "K"}},
    SchemeRow{.scheme = Scheme::ngpt,
              .name = "ngpt",
              .block = "h = N(N(h) + |alpha| ⊙ (N(f(h)) - N(h))); q, k = s_qk ⊙ q/|q| per "
                       "head; MLP input ⊙ s_uv; logits ⊙ s_z; unit-norm weights",
              .placement = fixed<kNgpt>,
              .final_norm = false,
              .interpolate = true,
              .unit_norm_weights = true,
              .weight_decay = false,
              .logit_scale = true,
              .sphere_qk = true,
              .mlp_scale = true,
              .default_norm = NormKind::l2,
              .overrides_allowed = false,
              // 2: q/k normalization with s_qk, s_uv, s_z, N(h) in the interpolation and the
              // reference's parametrization (NVIDIA/ngpt).
              .revision = 2,
              .earlier_revisions_lack = " (before q/k normalization, s_qk, s_uv, s_z)"},
    SchemeRow{.scheme = Scheme::sqrt_scaling,
              .name = "sqrt_scaling",
              .block = "h = h + f(N(h)) / sqrt(l + 1)",
              .placement = fixed<kSqrtScaling>},
    SchemeRow{.scheme = Scheme::deepnorm,
              .name = "deepnorm",
              .block = "h = N(a·h + f(h)), a = (2L)^(1/4), init × (8L)^(-1/4)",
              .placement = deepnorm_placement,
              .final_norm = false,
              .init = InitRule::deepnorm},
    SchemeRow{.scheme = Scheme::attnres,
              .name = "attnres",
              .block = "pre-norm sublayers; inputs are softmax mixtures of all earlier outputs",
              .placement = fixed<kPre>,
              .residual_mode = ResidualMode::attnres},
    SchemeRow{.scheme = Scheme::block_attnres,
              .name = "block_attnres",
              .block = "as attnres, over block sums of S sublayers",
              .placement = fixed<kPre>,
              .number = {&ModelConfig::block_size, "block_size", "--block-size", "S"},
              .residual_mode = ResidualMode::block_attnres},
    SchemeRow{.scheme = Scheme::sandwich,
              .name = "sandwich",
              .block = "h = h + N_out(f(N_in(h))): peri under its CogView / x-transformers name",
              .placement = fixed<kPeri>},
    SchemeRow{.scheme = Scheme::pre_and_post,
              .name = "pre_and_post",
              .block = "h = N_post(h + f(N_in(h)))",
              .placement = fixed<kPreAndPost>,
              .final_norm = false},
    SchemeRow{.scheme = Scheme::reordered,
              .name = "reordered",
              .block = "h = h + N(f(h)) (OLMo 2)",
              .placement = fixed<kReordered>},
    SchemeRow{.scheme = Scheme::layernorm_scaling,
              .name = "layernorm_scaling",
              .block = "h = h + f(N(h) / sqrt(l + 1))",
              .placement = fixed<kLayerNormScaling>},
    SchemeRow{.scheme = Scheme::layerscale,
              .name = "layerscale",
              .block = "h = h + lambda ⊙ f(N(h)), lambda learnable (D), init 0.1",
              .placement = fixed<kLayerScale>},
    SchemeRow{.scheme = Scheme::rezero,
              .name = "rezero",
              .block = "h = h + a · f(h), a one learnable number, init 0; no norms",
              .placement = fixed<kReZero>,
              .final_norm = false,
              .norm_none_allowed = true},
    // HybridNorm (BryceZhuo/HybridNorm): x + attn(x) with q, k, v normalized per head, then the
    // FFN's "post-norm" N(y) + FFN(N(y)), which is N after the attention's add: "attn: post".
    SchemeRow{.scheme = Scheme::hybridnorm,
              .name = "hybridnorm",
              .block = "h = N(h + attn(h)) with q, k, v each normalized per head; MLP h = h + "
                       "mlp(h)",
              .placement = fixed<kHybridNorm>,
              .head_norms = HeadNormRule::qkv},
    // resiDual (arXiv 2304.14802; microsoft/ResiDual): a post-norm stream x and a dual stream y
    // of the raw branch outputs, y starting as the embedding; output x + N(y).
    SchemeRow{.scheme = Scheme::resi_dual,
              .name = "resi_dual",
              .block = "x = N(x + f(x)), y = y + f(x); output x + N(y)",
              .placement = fixed<kPost>,
              .final_norm = false,
              .residual_mode = ResidualMode::two_stream,
              .overrides_allowed = false,
              .two_stream = {.renorm_x = false, .input_reads_y = false, .merge_norm_x = false}},
    // SiameseNorm (arXiv 2602.08064; Qwen-Applications/SiameseNorm): x ← N(x);
    // z = f(N_in(x + N(y))); x = x + z / sqrt(2(l+1)), y = y + z; output N_final(N(x) + N(y)).
    SchemeRow{.scheme = Scheme::siamesenorm,
              .name = "siamesenorm",
              .block = "x = N(x), z = f(N(x + N(y))), x = x + z / sqrt(2(l + 1)), y = y + z; "
                       "output N(N(x) + N(y))",
              .placement = siamesenorm_placement,
              .residual_mode = ResidualMode::two_stream,
              .overrides_allowed = false,
              .two_stream = {.renorm_x = true, .input_reads_y = true, .merge_norm_x = true}},
    // Hyper-connections (arXiv 2409.19606; mHC, arXiv 2512.24880, with `sinkhorn`): n streams
    // per token (`streams`); each pre-norm sublayer reads a learned mix of them and writes its
    // output into each with a learned weight, beside a learned n × n mix of the streams; the
    // output is their sum (docs/schemes.md, "Hyper-connections").
    SchemeRow{.scheme = Scheme::hyper_connections,
              .name = "hyper_connections",
              .block = "h = Σ_i A_m[i] H_i, H_j = B[j] f(N(h)) + Σ_i A_r[i,j] H_i (n streams H, "
                       "weights from N(H)); output Σ_j H_j",
              .placement = fixed<kPre>,
              .number = {&ModelConfig::streams, "streams", "--streams", "n"},
              .residual_mode = ResidualMode::hyper,
              .overrides_allowed = false},
    // ResFormer (arXiv 2410.17897; x-transformers' add_value_residual with the mix fixed at ½):
    // pre-norm, and every attention after the first reads ½(V_n + V_1), V_1 the first
    // attention's values (after its head norms, when any).
    SchemeRow{.scheme = Scheme::resformer,
              .name = "resformer",
              .block = "h = h + f(N(h)); attention n > 1 reads the values ½(V_n + V_1)",
              .placement = fixed<kPre>,
              .value_residual = true},
    SchemeRow{.scheme = Scheme::custom,
              .name = "custom",
              .block = "nothing but the model's `placement`; no final or embedding norm unless "
                       "it says so",
              .placement = fixed<kNothing>,
              .final_norm = false,
              .norm_none_allowed = true},
};

}  // namespace

std::span<const SchemeRow> scheme_table() {
  return kSchemeRows;
}

const SchemeRow& scheme_row(Scheme scheme) {
  for (const SchemeRow& row : kSchemeRows) {
    if (row.scheme == scheme) return row;
  }
  throw std::logic_error("scheme_row: a Scheme value without a row");
}

}  // namespace normlab
