#include "model_options.hpp"

#include <fmt/format.h>

#include "normlab/errors.hpp"
#include "validators.hpp"

namespace normlab::cli {

void add_model_options(CLI::App* cmd, ModelOptions& o) {
  ModelConfig& c = o.config;
  cmd->add_option("--scheme", o.scheme, "Normalization scheme")
      ->check(CLI::IsMember(scheme_names()))
      ->capture_default_str();
  cmd->add_option("--norm", o.norm, "Norm kind (default rmsnorm; l2 for ngpt)")
      ->check(CLI::IsMember(norm_kind_names()));
  cmd->add_option("--vocab", c.vocab, "Vocabulary size V")
      ->check(integer_in(limits::vocab))
      ->capture_default_str();
  cmd->add_option("--width", c.width, "Model width D")
      ->check(integer_in(limits::width))
      ->capture_default_str();
  cmd->add_option("--heads", c.heads, "Attention heads H (must divide D)")
      ->check(integer_in(limits::heads))
      ->capture_default_str();
  cmd->add_option("--layers", c.layers, "Number of blocks L")
      ->check(integer_in(limits::layers))
      ->capture_default_str();
  cmd->add_flag("--mlp,!--no-mlp", c.mlp, "MLP sublayer in each block (default on)");
  cmd->add_option("--mlp-mult", c.mlp_mult, "MLP hidden width multiplier")
      ->check(integer_in(limits::mlp_mult))
      ->capture_default_str();
  cmd->add_option("--activation", o.activation, "MLP activation")
      ->check(CLI::IsMember({"gelu", "relu"}))
      ->capture_default_str();
  cmd->add_option("--pos", o.pos, "Positional encoding")
      ->check(CLI::IsMember(pos_encoding_names()))
      ->capture_default_str();
  cmd->add_option("--max-len", c.max_len, "Longest sequence for learned positions")
      ->check(integer_in(limits::max_len))
      ->capture_default_str();
  cmd->add_flag("--causal,!--bidirectional", c.causal,
                "Causal (default) or bidirectional attention");
  cmd->add_option("--beta", c.beta, "Attention temperature: logits scaled by beta/sqrt(D/H)")
      ->check(real_number())
      ->capture_default_str();
  o.mix_layers_opt =
      cmd->add_option("--mix-layers", c.mix_layers, "k of mix(k): layers l < k are post-norm")
          ->check(integer())
          ->capture_default_str();
  o.block_size_opt =
      cmd->add_option("--block-size", c.block_size, "Sublayers per block of block_attnres")
          ->check(integer())
          ->capture_default_str();
  cmd->add_flag("--tied,!--untied", c.tied,
                "Tie the unembedding to the embedding (default untied)");
  o.final_norm_flag = cmd->add_flag("--final-norm,!--no-final-norm", o.final_norm,
                                    "Norm before the unembedding (default: per scheme)");
  o.embed_norm_flag = cmd->add_flag("--embed-norm,!--no-embed-norm", o.embed_norm,
                                    "Norm on the embeddings (default: on for peri_init only)");
  cmd->add_option("--init-std", c.init_std, "Std of the normal weight init")
      ->check(real_number())
      ->capture_default_str();
  cmd->add_option("--attn-norms", o.attn_norms,
                  "Attention sublayers' norms, overriding the scheme: auto, none, or slots "
                  "in, out, post joined by '+', each optionally ':KIND' (docs/schemes.md)")
      ->capture_default_str();
  cmd->add_option("--mlp-norms", o.mlp_norms, "MLP sublayers' norms, as --attn-norms")
      ->capture_default_str();
  cmd->add_flag("--scaled-init,!--no-scaled-init", c.scaled_residual_init,
                "Scale output-projection init by 1/sqrt(2L) (default on)");
}

ModelConfig resolve_model_options(ModelOptions& o) {
  ModelConfig c = o.config;
  c.scheme = parse_scheme(o.scheme);
  c.norm = o.norm.empty() ? default_norm_kind(c.scheme) : parse_norm_kind(o.norm);
  c.pos = parse_pos_encoding(o.pos);
  c.activation = parse_activation(o.activation);
  try {
    c.attn_norms = parse_norm_placement(o.attn_norms);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--attn-norms: {}", e.what()));
  }
  try {
    c.mlp_norms = parse_norm_placement(o.mlp_norms);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--mlp-norms: {}", e.what()));
  }
  if (o.final_norm_flag->count() > 0) c.final_norm = o.final_norm ? Toggle::on : Toggle::off;
  if (o.embed_norm_flag->count() > 0) c.embed_norm = o.embed_norm ? Toggle::on : Toggle::off;
  if (o.mix_layers_opt->count() > 0 && c.scheme != Scheme::mix) {
    throw UsageError(
        fmt::format("--mix-layers applies only to --scheme mix (got --scheme {})", o.scheme));
  }
  if (o.block_size_opt->count() > 0 && c.scheme != Scheme::block_attnres) {
    throw UsageError(fmt::format(
        "--block-size applies only to --scheme block_attnres (got --scheme {})", o.scheme));
  }
  validate(c);
  return c;
}

}  // namespace normlab::cli
