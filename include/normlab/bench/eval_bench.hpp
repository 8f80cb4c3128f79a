// Evaluation-speed benchmark: a one-layer model (the vanishing-variance model: argmax
// retrieval, D = 64, one head, MLP 4x, post_attn with layernorm) on argmax-retrieval inputs of
// n items, logits at the query position; normlab's streaming inference path
// (Model::forward_rows) against the PyTorch twin's plain forward on the same inputs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace normlab {

struct EvalBenchResult {
  int64_t seq_len = 0;
  int64_t sequences = 0;
  double seconds_per_sequence = 0;       // normlab, best of repeats, median over sequences
  std::vector<std::vector<float>> last;  // logits at the query position, per sequence
};

// Writes DIR/model.safetensors and DIR/tokens.safetensors (the inputs) and times normlab.
EvalBenchResult run_eval_bench(const std::filesystem::path& dir, int64_t items, int64_t sequences,
                               int repeats);

}  // namespace normlab
