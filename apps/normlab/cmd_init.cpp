// `normlab init`: writes a randomly initialized checkpoint.
#include <cstdio>

#include "commands.hpp"
#include "model_options.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "validators.hpp"

namespace normlab::cli {

void add_init_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("init", "Write a randomly initialized model checkpoint");
  auto opts = std::make_shared<ModelOptions>();
  auto seed = std::make_shared<uint64_t>(0);
  auto out = std::make_shared<std::string>();
  add_model_options(cmd, *opts);
  cmd->add_option("--seed", *seed, "Random seed of the initialization")
      ->check(seed_value())
      ->capture_default_str();
  cmd->add_option("--out", *out, "Checkpoint directory to write")
      ->required()
      ->check(non_empty_path());
  cmd->callback([opts, seed, out] {
    const ModelConfig config = resolve_model_options(*opts);
    Model<float> model(config);
    model.init(*seed);
    save_checkpoint(*out, model);
    std::printf("wrote %s/%s: scheme %s, norm %s, %lld parameters\n", out->c_str(), kModelFile,
                scheme_label(config).c_str(), to_string(config.norm).c_str(),
                static_cast<long long>(model.layout().total()));
  });
}

}  // namespace normlab::cli
