// `normlab forward`: logits of one token sequence, as JSON {"logits": [[V values], ...]}: of
// every position by the training pass (Model::forward), or with --rows of the listed positions
// by the inference pass (Model::forward_rows: streaming attention, the layers from the last
// attention on computing those rows only). Floats are printed in their shortest exact form,
// so two builds' outputs compare bit for bit (bench/binary_bits.sh).
#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "checkpoint_source.hpp"
#include "commands.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/model/model.hpp"
#include "token_list.hpp"

namespace normlab::cli {

void add_forward_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("forward", "Print the logits of a token sequence as JSON");
  auto checkpoint = std::make_shared<std::string>();
  auto tokens = std::make_shared<std::string>();
  auto rows = std::make_shared<std::string>();
  auto weights = std::make_shared<std::string>("raw");
  cmd->add_option("--checkpoint", *checkpoint,
                  "Run directory, its final/, a checkpoint, or a weights file")
      ->required();
  cmd->add_option("--weights", *weights, "Which weights of a run")
      ->check(CLI::IsMember({"raw", "ema", "bema"}))
      ->capture_default_str();
  cmd->add_option("--tokens", *tokens, "Token ids, e.g. \"3 1 4 1 5\"")->required();
  cmd->add_option("--rows", *rows,
                  "Positions whose logits to print, ascending, e.g. \"0 4\": computed by the "
                  "inference pass (streaming attention, the last layers on these rows only)");
  cmd->callback([checkpoint, weights, tokens, rows] {
    const std::vector<int32_t> ids = parse_token_list(*tokens);
    auto model = load_source_model(resolve_checkpoint(*checkpoint, *weights));
    const int64_t T = static_cast<int64_t>(ids.size());
    std::vector<int64_t> listed;
    const std::vector<int32_t> positions =
        rows->empty() ? std::vector<int32_t>{} : parse_token_list(*rows, "--rows", "position");
    for (const int32_t t : positions) {
      if (t >= T || (!listed.empty() && t <= listed.back())) {
        throw UsageError(fmt::format(
            "--rows must list ascending positions below the sequence's length {}; got {}", T,
            *rows));
      }
      listed.push_back(t);
    }
    const float* logits = listed.empty() ? model->forward(ids.data(), 1, T)
                                         : model->forward_rows(ids.data(), 1, T, 1, listed);
    const int64_t R = listed.empty() ? T : static_cast<int64_t>(listed.size());
    const int V = model->config().vocab;
    for (int64_t i = 0; i < R * V; ++i) {
      if (!std::isfinite(logits[i])) {
        throw InputError(
            fmt::format("{}: the logits are not finite (NaN or Inf): the weights "
                        "overflow float32 arithmetic",
                        *checkpoint));
      }
    }
    nlohmann::json rows = nlohmann::json::array();
    nlohmann::json out = nlohmann::json::array();
    for (int64_t r = 0; r < R; ++r) {
      out.push_back(std::vector<float>(logits + r * V, logits + (r + 1) * V));
    }
    std::printf("%s\n", nlohmann::json{{"logits", out}}.dump().c_str());
  });
}

}  // namespace normlab::cli
