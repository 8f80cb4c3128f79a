// The variance probe (vanishing variance, docs/reference.md §5; arXiv 2504.02827): how the spread
// of each attention sublayer's output changes with the sequence length N.
//
// At each length, `samples` sequences (random i.i.d. tokens or a task's inputs) go through
// the streaming forward; at the measured rows (the last k positions of every sequence,
// default k = 1: in a causal model the position that attends to all N tokens) the probe
// collects, for every attention sublayer (layer l):
//   attn_out         y = f(u), the attention output after the output projection, before
//                    any norm (Model::branch_output)
//   attn_out_normed  N_out(y), the attention output after the block's output norm, for
//                    schemes that have one (peri, peri_init, post_attn, ngpt); other schemes
//                    have no norm on the attention output alone, and no such rows
//   stream_out       the residual stream leaving the attention sublayer (for post and
//                    deepnorm: N(x + y), the next norm the attention output meets)
//   head h           head h's slice of the attention output before the output projection
// and for each: the per-feature std across the measured rows (mean over features), and the
// global mean and variance of all values (FeatureMoments). Then per (layer, site, head) a
// least-squares fit of ln(mean per-feature std) against ln N with its 95% t interval, and
// histograms of the attention-output values at two lengths.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "normlab/model/model.hpp"
#include "normlab/probes/feature_moments.hpp"
#include "normlab/probes/length_sweep.hpp"
#include "normlab/probes/line_fit.hpp"
#include "normlab/probes/probe_input.hpp"

namespace normlab {

enum class VarianceSite { attn_out, attn_out_normed, stream_out, head };
std::string to_string(VarianceSite s);

struct VarianceConfig {
  SweepConfig sweep;
  // Two of the probed lengths for histograms; empty: 16 if probed (else the shortest), and
  // the longest.
  std::vector<int64_t> hist_lengths;
  int hist_bins = 60;
  int64_t hist_max_values = int64_t{1} << 22;  // values kept per (layer, site, length)
};

struct VarianceRow {
  int64_t length = 0, seq_len = 0;
  int layer = 0, sublayer = 0;
  VarianceSite site = VarianceSite::attn_out;
  int head = -1;  // head sites only
  MomentSummary stats;
};

struct VarianceFit {
  int layer = 0, sublayer = 0;
  VarianceSite site = VarianceSite::attn_out;
  int head = -1;
  LineFit fit;  // ln(mean_feature_std) = intercept + slope · ln N over the probed lengths
};

struct VarianceHistogram {
  int layer = 0;
  VarianceSite site = VarianceSite::attn_out;
  std::vector<double> edges;                 // bins + 1 edges, shared by both lengths
  std::vector<int64_t> lengths;              // the two lengths
  std::vector<std::vector<int64_t>> counts;  // per length, per bin
  std::vector<std::vector<double>> density;  // counts / (values · bin width)
  std::vector<int64_t> values;               // values binned per length
};

struct VarianceResult {
  std::vector<SweepLength> lengths;
  std::vector<VarianceRow> rows;  // by length, then layer, then site (heads last)
  std::vector<VarianceFit> fits;
  std::vector<VarianceHistogram> histograms;
  std::string norm_after;  // the norm kind on the attention output, or "none"
  int layers = 0, heads = 1;
};

// Sorts the lengths and fills in the default histogram lengths; UsageError (one line) for an
// invalid sweep (validate_sweep), fewer than two measured rows per length, or a histogram
// length that is not probed.
void validate_variance(const ModelConfig& model, const ProbeInput& input, VarianceConfig& config);

// Validates the config first (validate_variance), before any work.
VarianceResult run_variance_probe(Model<float>& model, const ProbeInput& input,
                                  VarianceConfig config,
                                  const std::function<void(const SweepLength&)>& progress = {});

// length,seq_len,layer,sublayer,site,head,rows,features,mean_feature_std,global_mean,global_var,global_std
std::string variance_csv(const VarianceResult& r);
// layer,sublayer,site,head,points,slope,slope_ci_low,slope_ci_high,slope_se,intercept,r2
std::string variance_fit_csv(const VarianceResult& r);
// layer,site,length,bin,bin_low,bin_high,count,density
std::string variance_hist_csv(const VarianceResult& r);
nlohmann::json variance_json(const VarianceResult& r);
// Per-feature std of the attention output per length (first and last layer), then the fits.
std::string format_variance_table(const VarianceResult& r);

}  // namespace normlab
