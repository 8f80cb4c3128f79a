// The length sweep shared by the variance and dispersion probes: for each length, `samples`
// fresh sequences (seeded by seed and length, so every model sees the same inputs) go
// through Model::forward_rows, the streaming inference path: attention keeps O(T·D) memory,
// and only the measured rows are computed in the last attention sublayer. Each attention
// sublayer's activations are handed to a visitor as they are computed.
//
// Cost: one forward of every token through the sublayers before the last attention
// (O(samples·L·T²·D) when L ≥ 2), plus O(samples·k·T·D) for the measured rows of the last
// attention; a one-layer model is linear in T.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "normlab/base/batch.hpp"
#include "normlab/model/model.hpp"
#include "normlab/probes/probe_input.hpp"

namespace normlab {

struct SweepConfig {
  // Sequence lengths N (random input) or task lengths n (task input); probed in ascending order.
  std::vector<int64_t> lengths;
  int64_t samples = 256;             // sequences per length
  int64_t query_rows = 1;            // measured positions per sequence (ProbeInput::query_rows)
  uint64_t seed = 20251010;          // input seed; length n uses seed ^ (n · golden ratio)
  int64_t max_memory = 256LL << 20;  // bytes of activations per forward call
};

// What one forward call computed in one attention sublayer.
struct SweepSample {
  int64_t length_index = 0;  // into SweepConfig::lengths (sorted)
  int layer = 0;             // block index l of the attention sublayer
  const SublayerTrace<float>* trace = nullptr;
  const std::vector<int64_t>* query = nullptr;  // (Q) measured rows b·T + t, ascending
  const std::vector<int64_t>* at = nullptr;     // (Q) each measured row's index in the trace
  const Batch* batch = nullptr;
};
using SweepVisitor = std::function<void(const SweepSample&)>;

struct SweepLength {
  int64_t length = 0;     // N or n
  int64_t seq_len = 0;    // T
  int64_t sequences = 0;  // samples
  int64_t rows = 0;       // measured rows over all sequences
  int64_t calls = 0;      // forward calls (sequences per call bounded by max_memory)
  double seconds = 0;
};

// The "lengths" array of a probe's JSON: one object per length with the fields above
// (`calls` as "forward_calls").
nlohmann::json sweep_lengths_json(const std::vector<SweepLength>& lengths);

// Bytes per row of a call, which split the samples into calls: forward_rows's sublayer and
// additive-stream buffers and the batch's. The residual modes' own inference buffers
// (src/model/residual/) are not counted; the figure is kept as it is because it decides which
// sequences share a call.
int64_t sweep_bytes_per_row(const ModelConfig& config, int fields);

// Sorts the lengths and throws UsageError (one line: what, which length, what is allowed) for
// no lengths, a repeated one, one the input cannot produce, one beyond the learned positions,
// one whose single sequence needs more than max_memory, or samples/query_rows below 1.
void validate_sweep(const ModelConfig& model, const ProbeInput& input, SweepConfig& config);

// Runs the sweep (validate_sweep first). `progress` (may be empty) is called after each length.
std::vector<SweepLength> run_length_sweep(
    Model<float>& model, const ProbeInput& input, SweepConfig config, const SweepVisitor& visit,
    const std::function<void(const SweepLength&)>& progress = {});

}  // namespace normlab
