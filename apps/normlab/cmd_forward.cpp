// `normlab forward`: logits of one token sequence, as JSON {"logits": [[V values], ...]}.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "normlab/checkpoint.hpp"
#include "normlab/errors.hpp"
#include "normlab/model.hpp"
#include "token_list.hpp"

namespace normlab::cli {

void add_forward_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("forward", "Print the logits of a token sequence as JSON");
  auto checkpoint = std::make_shared<std::string>();
  auto tokens = std::make_shared<std::string>();
  cmd->add_option("--checkpoint", *checkpoint, "Checkpoint directory")->required();
  cmd->add_option("--tokens", *tokens, "Token ids, e.g. \"3 1 4 1 5\"")->required();
  cmd->callback([checkpoint, tokens] {
    const std::vector<int32_t> ids = parse_token_list(*tokens);
    auto model = load_checkpoint(*checkpoint);
    const int64_t T = static_cast<int64_t>(ids.size());
    const float* logits = model->forward(ids.data(), 1, T);
    const int V = model->config().vocab;
    for (int64_t i = 0; i < T * V; ++i) {
      if (!std::isfinite(logits[i])) {
        throw InputError(
            fmt::format("{}: the logits are not finite (NaN or Inf): the weights "
                        "overflow float32 arithmetic",
                        *checkpoint));
      }
    }
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t t = 0; t < T; ++t) {
      rows.push_back(std::vector<float>(logits + t * V, logits + (t + 1) * V));
    }
    std::printf("%s\n", nlohmann::json{{"logits", rows}}.dump().c_str());
  });
}

}  // namespace normlab::cli
