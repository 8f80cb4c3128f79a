#include "normlab/probes/length_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "normlab/base/errors.hpp"
#include "normlab/model/scheme_table.hpp"

namespace normlab {

int64_t sweep_bytes_per_row(const ModelConfig& c, int fields) {
  const int64_t D = c.width, M = c.mlp ? c.mlp_hidden() : 0;
  // Per-head norms (QK-norm, hybridnorm): the projection before them (3 D), their statistics
  // (6 H).
  const bool head_norms =
      c.qk_norm != QkNorm::none || scheme_row(c.scheme).head_norms != HeadNormRule::none;
  int64_t extra = head_norms ? 3 * D + 6 * c.heads : 0;
  if (scheme_row(c.scheme).value_residual) extra += D;  // V_1 (resformer)
  // forward_rows: embed_raw, h, h_next, u, y, z, r, gathered (8 D), qkv (3 D), MLP hidden
  // before and after the activation (2 M), norm statistics (2); the batch: tokens (F),
  // weight, target slot.
  return 4 * (11 * D + 2 * M + 2 + extra) + 4 * (fields + 2);
}

void validate_sweep(const ModelConfig& model, const ProbeInput& input, SweepConfig& config) {
  if (config.lengths.empty()) throw UsageError("no lengths to probe; give --lengths");
  if (config.samples < 1) {
    throw UsageError(fmt::format("--samples {} is below 1", config.samples));
  }
  if (config.query_rows < 1) {
    throw UsageError(fmt::format("--query-rows {} is below 1", config.query_rows));
  }
  std::sort(config.lengths.begin(), config.lengths.end());
  const int64_t per_row = sweep_bytes_per_row(model, input.fields());
  for (size_t k = 0; k < config.lengths.size(); ++k) {
    const int64_t n = config.lengths[k];
    if (k > 0 && n == config.lengths[k - 1]) {
      throw UsageError(fmt::format("length {} is listed twice in --lengths", n));
    }
    input.check_length(n);
    const int64_t T = input.sequence_length(n);
    if (model.pos == PosEncoding::learned && T > model.max_len) {
      throw UsageError(fmt::format(
          "length {} (sequence length {}) exceeds the model's learned positions (max-len {})", n, T,
          model.max_len));
    }
    if (T > config.max_memory / per_row) {
      throw UsageError(
          fmt::format("length {} needs {} MiB of activations for one sequence of {} tokens, above "
                      "--max-memory {} MiB",
                      n, (T * per_row) >> 20, T, config.max_memory >> 20));
    }
  }
}

std::vector<SweepLength> run_length_sweep(Model<float>& model, const ProbeInput& input,
                                          SweepConfig config, const SweepVisitor& visit,
                                          const std::function<void(const SweepLength&)>& progress) {
  validate_sweep(model.config(), input, config);
  const ModelConfig& c = model.config();
  const int64_t per_row = sweep_bytes_per_row(c, input.fields());
  std::vector<SweepLength> out;
  for (size_t li = 0; li < config.lengths.size(); ++li) {
    const auto t0 = std::chrono::steady_clock::now();
    SweepLength r;
    r.length = config.lengths[li];
    r.seq_len = input.sequence_length(r.length);
    r.sequences = config.samples;
    const int64_t per_call =
        std::clamp<int64_t>(config.max_memory / per_row / r.seq_len, 1, config.samples);
    Rng rng(config.seed ^ (static_cast<uint64_t>(r.length) * 0x9e3779b97f4a7c15ULL));
    std::vector<int64_t> at;
    for (int64_t done = 0; done < config.samples; done += per_call) {
      const int64_t B = std::min(per_call, config.samples - done);
      const Batch batch = input.make_batch(r.length, B, rng);
      const std::vector<int64_t> query = input.query_rows(batch, config.query_rows);
      r.rows += static_cast<int64_t>(query.size());
      ++r.calls;
      model.forward_rows(batch.tokens.data(), B, batch.len, batch.fields, query,
                         [&](const SublayerTrace<float>& t) {
                           if (!t.is_attention) return;
                           // Every row before the last attention, only the requested ones in it.
                           at.resize(query.size());
                           const bool all = t.rows == B * batch.len;
                           for (size_t k = 0; k < query.size(); ++k) {
                             at[k] = all ? query[k] : static_cast<int64_t>(k);
                           }
                           SweepSample s;
                           s.length_index = static_cast<int64_t>(li);
                           s.layer = t.index / c.sublayers_per_layer();
                           s.trace = &t;
                           s.query = &query;
                           s.at = &at;
                           s.batch = &batch;
                           visit(s);
                         });
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (progress) progress(r);
    out.push_back(r);
  }
  return out;
}

nlohmann::json sweep_lengths_json(const std::vector<SweepLength>& lengths) {
  nlohmann::json out = nlohmann::json::array();
  for (const SweepLength& l : lengths) {
    out.push_back({{"length", l.length},
                   {"seq_len", l.seq_len},
                   {"sequences", l.sequences},
                   {"rows", l.rows},
                   {"forward_calls", l.calls},
                   {"seconds", l.seconds}});
  }
  return out;
}

}  // namespace normlab
