// The dispersion probe (attention dispersion, arXiv 2510.08341): how sharp each head's attention
// stays as the sequence grows. At each length, for every attention layer and head, over the
// measured rows (the same sweep and rows as the variance probe): the mean and standard
// deviation of the query's largest attention weight and of its attention entropy (nats,
// attention_stats.hpp), with the uniform reference: the mean of ln(keys seen), which the
// entropy reaches when attention is uniform (causal: ln(t + 1) at position t).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "normlab/model/model.hpp"
#include "normlab/probes/length_sweep.hpp"
#include "normlab/probes/probe_input.hpp"

namespace normlab {

struct DispersionRow {
  int64_t length = 0, seq_len = 0;
  int layer = 0, sublayer = 0, head = 0;
  int64_t rows = 0;            // measured query rows
  double max_weight_mean = 0;  // mean over rows of max_j p_j
  double max_weight_sd = 0;    // sample std over rows (NaN for one row)
  double entropy_mean = 0;     // mean over rows of −Σ p ln p
  double entropy_sd = 0;
  double uniform_entropy = 0;     // mean over rows of ln(keys)
  double uniform_max_weight = 0;  // mean over rows of 1 / keys
};

struct DispersionResult {
  std::vector<SweepLength> lengths;
  std::vector<DispersionRow> rows;  // by length, then layer, then head
  int layers = 0, heads = 1;
};

DispersionResult run_dispersion_probe(Model<float>& model, const ProbeInput& input,
                                      SweepConfig config,
                                      const std::function<void(const SweepLength&)>& progress = {});

// length,seq_len,layer,sublayer,head,rows,max_weight_mean,max_weight_sd,entropy_mean,
// entropy_sd,uniform_entropy,uniform_max_weight
std::string dispersion_csv(const DispersionResult& r);
nlohmann::json dispersion_json(const DispersionResult& r);
// One line per length: max weight and entropy (with the uniform ln keys) of the first and last
// layer, averaged over heads.
std::string format_dispersion_table(const DispersionResult& r);

}  // namespace normlab
