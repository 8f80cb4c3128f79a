#include "normlab/particles/model_weights.hpp"

#include <fmt/format.h>

#include <cmath>

#include "normlab/base/errors.hpp"

namespace normlab::particles {

namespace {

SpeedLaw particle_scheme(const ModelConfig& c) {
  switch (c.scheme) {
    case normlab::Scheme::pre:
      return SpeedLaw::pre;
    case normlab::Scheme::post:
      return SpeedLaw::post;
    case normlab::Scheme::peri:
    case normlab::Scheme::peri_init:
      return SpeedLaw::peri;
    case normlab::Scheme::mix:
      return SpeedLaw::mix;
    default:
      throw UsageError(fmt::format(
          "scheme {} has no particle law; --from-checkpoint allows pre, post, peri, peri_init "
          "and mix",
          scheme_label(c)));
  }
}

}  // namespace

void check_model_has_particle_law(const ModelConfig& c) {
  particle_scheme(c);
  if (c.qk_norm != normlab::QkNorm::none) {
    throw UsageError(
        fmt::format("qk_norm {} normalizes queries and keys per head, which the "
                    "particle law does not model; --from-checkpoint allows qk_norm "
                    "none",
                    to_string(c.qk_norm)));
  }
  if (c.pos == normlab::PosEncoding::alibi || c.pos == normlab::PosEncoding::relative) {
    throw UsageError(fmt::format(
        "pos {} adds terms by distance to the attention logits, which the particle law "
        "does not model; --from-checkpoint allows pos none, learned, sinusoidal and rope",
        to_string(c.pos)));
  }
  if (c.norm != NormKind::rmsnorm && c.norm != NormKind::l2) {
    // scalenorm is one (its own learned scale per norm, which the law's single c does not
    // carry); the others are not.
    const char* why = c.norm == NormKind::scalenorm
                          ? "has a learned scale in every norm, which the particle law's one "
                            "output scale c does not model"
                          : "is not a function of the token direction alone";
    throw UsageError(
        fmt::format("norm {} {}; --from-checkpoint allows rmsnorm and l2", to_string(c.norm), why));
  }
}

ModelParticles extract_model_particles(const Model<float>& model, double embedding_norm) {
  const ModelConfig& mc = model.config();
  check_model_has_particle_law(mc);
  const int D = mc.width, H = mc.heads, hd = mc.head_dim(), L = mc.layers;
  const int spl = mc.sublayers_per_layer();
  const size_t dd = static_cast<size_t>(D) * D;
  const std::vector<float>& p = model.params();

  ModelParticles out;
  out.input_scale = mc.norm == NormKind::rmsnorm ? std::sqrt(static_cast<double>(D)) : 1.0;
  ParticlesConfig& c = out.config;
  c.scheme = particle_scheme(mc);
  c.d = D;
  c.heads = H;
  c.beta = mc.beta / std::sqrt(static_cast<double>(hd));
  c.causal = mc.causal;
  c.tau = mc.mix_layers;
  c.t_end = L;
  c.qkv = QkvKind::file;
  c.qkv_depth = QkvDepth::per_layer;
  if (mc.pos == PosEncoding::rope) {  // token j at position j, rotated as the model does
    c.rope_base = mc.rope_base;
    c.rope_head_dim = hd;
  }

  for (int l = 0; l < L; ++l) {
    const int i = l * spl;  // the layer's attention sublayer
    const SublayerParams& sp = model.sublayer_params()[static_cast<size_t>(i)];
    const bool has_norm_in = model.scheme().sublayers[static_cast<size_t>(i)].norm_in;
    // G = diag(scale_b): c·g with a norm before attention, else ρ_l.
    std::vector<double> scale(static_cast<size_t>(D));
    for (int b = 0; b < D; ++b) {
      if (has_norm_in) {
        const double gain = sp.norm_in.gain >= 0 ? p[static_cast<size_t>(sp.norm_in.gain + b)] : 1;
        scale[b] = out.input_scale * gain;
      } else {
        scale[b] = l == 0 ? embedding_norm : out.input_scale;
      }
    }
    // Post: N(x + y) turns the direction of x by P(y)/‖x‖ per layer, so A = y/ρ_l.
    const double value_divisor = has_norm_in ? 1.0 : scale[0];
    const float* wq = p.data() + sp.w_in;
    const float* wk = wq + dd;
    const float* wv = wk + dd;
    const float* wo = p.data() + sp.w_out;
    Weights w;
    w.d = D;
    w.identity = false;
    w.heads.resize(static_cast<size_t>(H));
    for (int h = 0; h < H; ++h) {
      HeadWeights& head = w.heads[static_cast<size_t>(h)];
      head.q.assign(dd, 0.0);
      head.k.assign(dd, 0.0);
      head.v.assign(dd, 0.0);
      for (int a = h * hd; a < (h + 1) * hd; ++a) {
        for (int b = 0; b < D; ++b) {
          const size_t ab = static_cast<size_t>(a) * D + b;
          head.q[ab] = wq[ab] * scale[b];
          head.k[ab] = wk[ab] * scale[b];
        }
      }
      // V_h[a][b] = H Σ_{e in head} W_o[a][e] W_v[e][b] scale_b (post: divided by ρ_l).
      for (int a = 0; a < D; ++a) {
        for (int e = h * hd; e < (h + 1) * hd; ++e) {
          const double o =
              static_cast<double>(wo[static_cast<size_t>(a) * D + e]) * H / value_divisor;
          const float* v_row = wv + static_cast<size_t>(e) * D;
          double* out_row = head.v.data() + static_cast<size_t>(a) * D;
          for (int b = 0; b < D; ++b) out_row[b] += o * v_row[b] * scale[b];
        }
      }
    }
    out.layers.push_back(std::move(w));
  }
  if (mc.mlp) {
    out.notes.push_back(
        "the model has MLP sublayers; the ODE has attention only (one unit of time per layer)");
  }
  if (c.scheme == SpeedLaw::peri) {
    out.notes.push_back(
        "peri: the ODE's dx/dt = A/|A| has no output-norm gain (exact for gains of 1)");
  }
  if (c.scheme == SpeedLaw::post || c.scheme == SpeedLaw::mix) {
    out.notes.push_back(
        "post layers: the input scale after a post norm is taken as c (exact for gains of 1)");
  }
  return out;
}

}  // namespace normlab::particles
