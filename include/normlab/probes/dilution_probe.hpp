// The dilution probe (2510.08341, "Post-Norm can Resharpen Attention"; docs/probes.md): on
// set_complement, how far the query position's logits separate the absent elements from the
// present ones, as the input size s grows.
//
// For each input size s, `samples` sequences from the task's own generator (s distinct
// elements of 1..v, then the query token) go through Model::forward_rows; at the query row,
// with A the v − s absent elements, P the s present ones (the query token 0 in neither) and
// ℓ ∈ R^V a vector of logits,
//
//   gap(ℓ) = (1/|A|) Σ_{j∈A} ℓ_j − (1/|P|) Σ_{j∈P} ℓ_j
//
// at three sites:
//   logits         ℓ = the model's final logits
//   branch         ℓ = U·y, y the last attention sublayer's output before any norm
//                  (Model::branch_output), U the unembedding (the embedding when tied; with
//                  nGPT's per-token logit scale applied)
//   branch_normed  ℓ = U·N_out(y), after the sublayer's output norm (schemes with one)
// Per (s, site): the mean gap over the sequences with its 95% Student-t interval; per site:
// the least-squares slope of ln|mean gap| against ln s (line_fit.hpp), −1 when the gap is
// diluted as 1/s, 0 when a norm restores it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "normlab/model/model.hpp"
#include "normlab/probes/line_fit.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab {

enum class DilutionSite { logits, branch, branch_normed };
std::string to_string(DilutionSite s);

struct DilutionConfig {
  std::vector<int64_t> sizes;  // input sizes s; empty: 1 .. v − 1
  int64_t samples = 256;       // sequences per size
  uint64_t seed = 20251010;    // size s uses seed ^ (s · golden ratio), as the sweeps
};

struct DilutionRow {
  int64_t s = 0, seq_len = 0;  // T = s + 1
  DilutionSite site = DilutionSite::logits;
  int64_t samples = 0;
  double gap = 0;                    // mean over sequences
  double gap_sd = 0;                 // sample std over sequences (NaN for one)
  double gap_low = 0, gap_high = 0;  // mean ± t_{0.975, n−1} · sd / sqrt(n)
};

struct DilutionFit {
  DilutionSite site = DilutionSite::logits;
  LineFit fit;  // ln|gap| = intercept + slope · ln s over the sizes (zero gaps left out)
};

struct DilutionResult {
  int v = 0;                      // elements 1..v (V = v + 1)
  int attention_sublayer = 0;     // the sublayer of the branch sites: the last attention
  std::string norm_after;         // the output norm's kind, or "none" (no branch_normed rows)
  std::vector<DilutionRow> rows;  // by s, then site
  std::vector<DilutionFit> fits;  // one per site
  double seconds = 0;
};

// Whether `task` is set_complement (the only task the probe understands).
bool is_set_complement(const Task& task);

// Sorts the sizes (default 1 .. v − 1) and throws UsageError (one line) for a task that is
// not set_complement, a model whose vocabulary is not the task's, a size outside the task's
// range or listed twice, a sequence beyond the learned positions, or samples below 1.
void validate_dilution(const ModelConfig& model, const Task& task, DilutionConfig& config);

// Validates first. `progress` (may be empty) is called after each size with s and seconds.
DilutionResult run_dilution_probe(Model<float>& model, const Task& task, DilutionConfig config,
                                  const std::function<void(int64_t, double)>& progress = {});

// s,seq_len,site,samples,gap,gap_sd,gap_low,gap_high
std::string dilution_csv(const DilutionResult& r);
// site,points,slope,slope_low,slope_high,slope_se,intercept,r2
std::string dilution_fit_csv(const DilutionResult& r);
nlohmann::json dilution_json(const DilutionResult& r);
// One line per size (the mean gap of each site), then the fits.
std::string format_dilution_table(const DilutionResult& r);

}  // namespace normlab
