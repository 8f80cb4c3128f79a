#include "normlab/bench/eval_bench.hpp"

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "normlab/io/safetensors.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab {

EvalBenchResult run_eval_bench(const std::filesystem::path& dir, int64_t items, int64_t sequences,
                               int repeats) {
  auto task = make_task_from_json(
      nlohmann::json{{"name", "argmax_retrieval"}, {"scores", 16}, {"values", 16}});
  ModelConfig c;
  c.vocab = task->vocab();
  c.width = 64;
  c.heads = 1;
  c.layers = 1;
  c.mlp = true;
  c.scheme = Scheme::post_attn;
  c.norm = NormKind::layernorm;
  Model<float> model(c);
  model.init(0);
  std::filesystem::create_directories(dir);
  save_checkpoint(dir, model);
  Rng rng(1);
  const Batch batch = task->make_batch(items, sequences, rng);
  SafetensorsFile tokens;
  tokens.tensors.push_back({"tokens",
                            {batch.batch, batch.len, batch.fields},
                            std::vector<float>(batch.tokens.begin(), batch.tokens.end())});
  write_safetensors(dir / "tokens.safetensors", tokens);

  EvalBenchResult r;
  r.seq_len = batch.len;
  r.sequences = sequences;
  const int64_t T = batch.len, F = batch.fields, V = c.vocab;
  std::vector<double> times;
  const std::vector<int64_t> rows = {T - 1};
  for (int64_t b = 0; b < sequences; ++b) {
    const int32_t* tok = batch.tokens.data() + b * T * F;
    double best = 1e30;
    const float* logits = nullptr;
    for (int k = 0; k < repeats; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      logits = model.forward_rows(tok, 1, T, static_cast<int>(F), rows);
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    times.push_back(best);
    r.last.emplace_back(logits, logits + V);
  }
  std::sort(times.begin(), times.end());
  r.seconds_per_sequence = times[times.size() / 2];
  return r;
}

}  // namespace normlab
