// `normlab schemes`: every row of the scheme table (scheme_table.hpp): its block, its preset in
// the placement language (for --layers L and, for mix, --mix-layers K) and its side effects.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "normlab/model/scheme_table.hpp"
#include "validators.hpp"

namespace normlab::cli {
namespace {

std::string side_effects(const SchemeRow& row) {
  std::vector<std::string> parts;
  parts.push_back(row.final_norm ? "final norm" : "no final norm");
  if (row.embed_norm) parts.push_back("embedding norm");
  if (row.residual_mode == ResidualMode::attnres) parts.push_back("AttnRes mixtures");
  if (row.residual_mode == ResidualMode::block_attnres) parts.push_back("block AttnRes mixtures");
  if (row.residual_mode == ResidualMode::two_stream)
    parts.push_back("a second stream y of branch outputs");
  if (row.residual_mode == ResidualMode::hyper)
    parts.push_back("n residual streams mixed by learned weights (mHC with --sinkhorn)");
  if (row.interpolate) parts.push_back("interpolated update");
  if (row.unit_norm_weights) parts.push_back("unit-norm weights");
  if (!row.weight_decay) parts.push_back("no weight decay");
  if (row.logit_scale) parts.push_back("logit scale");
  if (row.sphere_qk) parts.push_back("q, k normalized per head after RoPE, times s_qk");
  if (row.mlp_scale) parts.push_back("MLP pre-activation times s_uv");
  if (row.revision > 1) parts.push_back(fmt::format("revision {}", row.revision));
  if (row.init == InitRule::deepnorm) parts.push_back("DeepNorm init");
  if (row.head_norms == HeadNormRule::qkv) parts.push_back("q, k, v normalized per head");
  if (row.default_norm != NormKind::rmsnorm) {
    parts.push_back("default norm " + to_string(row.default_norm));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

void add_schemes_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "schemes", "List the normalization schemes with their placements (docs/schemes.md)");
  auto config = std::make_shared<ModelConfig>();
  cmd->add_option("--layers", config->layers, "Depth L the presets are written for")
      ->check(integer_in(limits::layers))
      ->capture_default_str();
  cmd->add_option("--mix-layers", config->mix_layers, "k of mix(k)")
      ->check(integer_in(limits::mix_layers))
      ->capture_default_str();
  cmd->callback([config] {
    for (const SchemeRow& row : scheme_table()) {
      const std::string number = row.number ? fmt::format("({})", row.number.letter) : "";
      const std::string placement = row.placement(*config);
      std::printf("%s%s: %s\n    placement: %s\n    %s\n", row.name, number.c_str(), row.block,
                  placement.empty() ? "(none: only the model's placement)" : placement.c_str(),
                  side_effects(row).c_str());
    }
  });
}

}  // namespace normlab::cli
