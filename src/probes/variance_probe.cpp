#include "normlab/probes/variance_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/io/number_text.hpp"

namespace normlab {
namespace {

nlohmann::json summary_json(const MomentSummary& s) {
  return {{"rows", s.rows},
          {"features", s.features},
          {"mean_feature_std", number_json(s.mean_feature_std)},
          {"global_mean", number_json(s.global_mean)},
          {"global_var", number_json(s.global_var)},
          {"global_std", number_json(s.global_std)}};
}

// Moments of one attention sublayer at one length.
struct LayerMoments {
  FeatureMoments heads, y, z, out;
  bool normed = false;
};

VarianceHistogram make_histogram(int layer, VarianceSite site, const std::vector<int64_t>& lengths,
                                 const std::vector<std::vector<float>>& values, int bins) {
  VarianceHistogram h;
  h.layer = layer;
  h.site = site;
  h.lengths = lengths;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& v : values) {
    for (float x : v) {
      if (!std::isfinite(x)) continue;
      lo = std::min(lo, double(x));
      hi = std::max(hi, double(x));
    }
  }
  if (!(lo <= hi)) lo = hi = 0;
  if (hi - lo <= 1e-12 * std::max(1.0, std::abs(lo))) {  // one value: a bin around it
    const double pad = std::max(1e-12, 1e-6 * std::abs(lo));
    lo -= pad;
    hi += pad;
  }
  const double width = (hi - lo) / bins;
  for (int b = 0; b <= bins; ++b) h.edges.push_back(lo + b * width);
  h.edges.back() = hi;
  for (const auto& v : values) {
    std::vector<int64_t> counts(bins, 0);
    int64_t total = 0;
    for (float x : v) {
      if (!std::isfinite(x)) continue;
      const int b = std::clamp(static_cast<int>((x - lo) / width), 0, bins - 1);
      ++counts[b];
      ++total;
    }
    std::vector<double> density(bins, 0.0);
    for (int b = 0; b < bins; ++b) {
      density[b] = total > 0 ? counts[b] / (total * width) : 0.0;
    }
    h.counts.push_back(std::move(counts));
    h.density.push_back(std::move(density));
    h.values.push_back(total);
  }
  return h;
}

}  // namespace

std::string to_string(VarianceSite s) {
  switch (s) {
    case VarianceSite::attn_out:
      return "attn_out";
    case VarianceSite::attn_out_normed:
      return "attn_out_normed";
    case VarianceSite::stream_out:
      return "stream_out";
    case VarianceSite::head:
      return "head";
  }
  return "?";
}

void validate_variance(const ModelConfig& c, const ProbeInput& input, VarianceConfig& config) {
  validate_sweep(c, input, config.sweep);
  const std::vector<int64_t>& lengths = config.sweep.lengths;  // sorted now
  if (config.sweep.samples * config.sweep.query_rows < 2) {
    throw UsageError(
        "the variance probe needs at least two measured rows per length; raise --samples");
  }
  if (config.hist_lengths.empty()) {
    const bool has16 = std::find(lengths.begin(), lengths.end(), 16) != lengths.end();
    config.hist_lengths = {has16 ? 16 : lengths.front(), lengths.back()};
    if (config.hist_lengths[0] == config.hist_lengths[1]) config.hist_lengths.pop_back();
  }
  for (int64_t n : config.hist_lengths) {
    if (std::find(lengths.begin(), lengths.end(), n) == lengths.end()) {
      throw UsageError(fmt::format("histogram length {} is not one of the probed lengths", n));
    }
  }
  if (config.hist_bins < 1) throw UsageError("histograms need at least one bin");
}

VarianceResult run_variance_probe(Model<float>& model, const ProbeInput& input,
                                  VarianceConfig config,
                                  const std::function<void(const SweepLength&)>& progress) {
  const ModelConfig& c = model.config();
  validate_variance(c, input, config);
  const std::vector<int64_t>& lengths = config.sweep.lengths;
  const int L = c.layers, spl = c.sublayers_per_layer();
  const int D = c.width, H = c.heads, dh = c.head_dim();
  const ResolvedScheme& scheme = model.scheme();
  std::vector<bool> normed(L);
  bool any_normed = false;
  NormKind normed_kind = c.norm;  // the attention output norm's kind (a placement may set it)
  for (int l = 0; l < L; ++l) {
    normed[l] = scheme.sublayers[l * spl].norm_out;
    if (normed[l] && !any_normed) normed_kind = scheme.sublayers[l * spl].kind_out;
    any_normed = any_normed || normed[l];
  }
  std::vector<std::vector<LayerMoments>> acc(lengths.size());
  for (auto& per_length : acc) {
    for (int l = 0; l < L; ++l) {
      per_length.push_back({FeatureMoments(D), FeatureMoments(D), FeatureMoments(normed[l] ? D : 0),
                            FeatureMoments(D), normed[l]});
    }
  }
  // Histogram values: [layer][site 0 = attn_out, 1 = normed][hist length] → values.
  std::vector<std::vector<std::vector<std::vector<float>>>> hist(
      L, std::vector<std::vector<std::vector<float>>>(
             2, std::vector<std::vector<float>>(config.hist_lengths.size())));
  auto keep = [&](std::vector<float>& dst, const float* base, const std::vector<int64_t>& at) {
    for (int64_t k : at) {
      if (static_cast<int64_t>(dst.size()) + D > config.hist_max_values) return;
      dst.insert(dst.end(), base + k * D, base + (k + 1) * D);
    }
  };

  VarianceResult out;
  out.layers = L;
  out.heads = H;
  out.norm_after = any_normed ? to_string(normed_kind) : "none";
  out.lengths = run_length_sweep(
      model, input, config.sweep,
      [&](const SweepSample& s) {
        const SublayerTrace<float>& t = *s.trace;
        const int64_t Q = static_cast<int64_t>(s.at->size());
        LayerMoments& m = acc[s.length_index][s.layer];
        m.heads.add(t.heads, D, s.at->data(), Q);
        m.y.add(t.branch, D, s.at->data(), Q);
        if (m.normed) m.z.add(t.branch_normed, D, s.at->data(), Q);
        m.out.add(t.output, D, s.at->data(), Q);
        const int64_t n = lengths[s.length_index];
        for (size_t h = 0; h < config.hist_lengths.size(); ++h) {
          if (config.hist_lengths[h] != n) continue;
          keep(hist[s.layer][0][h], t.branch, *s.at);
          if (m.normed) keep(hist[s.layer][1][h], t.branch_normed, *s.at);
        }
      },
      progress);

  for (size_t li = 0; li < lengths.size(); ++li) {
    for (int l = 0; l < L; ++l) {
      const LayerMoments& m = acc[li][l];
      VarianceRow row;
      row.length = out.lengths[li].length;
      row.seq_len = out.lengths[li].seq_len;
      row.layer = l;
      row.sublayer = l * spl;
      auto push = [&](VarianceSite site, int head, const MomentSummary& st) {
        row.site = site;
        row.head = head;
        row.stats = st;
        out.rows.push_back(row);
      };
      push(VarianceSite::attn_out, -1, m.y.summary());
      if (m.normed) push(VarianceSite::attn_out_normed, -1, m.z.summary());
      push(VarianceSite::stream_out, -1, m.out.summary());
      for (int h = 0; h < H; ++h)
        push(VarianceSite::head, h, m.heads.summary(h * dh, (h + 1) * dh));
    }
  }

  // Fits, one per (layer, site, head) in the order rows first list them.
  std::map<std::tuple<int, int, int>, size_t> fit_index;
  std::vector<std::pair<std::vector<double>, std::vector<double>>> points;
  for (const VarianceRow& row : out.rows) {
    const auto key = std::make_tuple(row.layer, static_cast<int>(row.site), row.head);
    auto it = fit_index.find(key);
    if (it == fit_index.end()) {
      it = fit_index.emplace(key, out.fits.size()).first;
      out.fits.push_back({row.layer, row.sublayer, row.site, row.head, {}});
      points.emplace_back();
    }
    const double v = row.stats.mean_feature_std;
    if (std::isfinite(v) && v > 0) {
      points[it->second].first.push_back(std::log(static_cast<double>(row.length)));
      points[it->second].second.push_back(std::log(v));
    }
  }
  for (size_t k = 0; k < out.fits.size(); ++k) {
    out.fits[k].fit = fit_line(points[k].first, points[k].second);
  }

  for (int l = 0; l < L; ++l) {
    out.histograms.push_back(make_histogram(l, VarianceSite::attn_out, config.hist_lengths,
                                            hist[l][0], config.hist_bins));
    if (normed[l]) {
      out.histograms.push_back(make_histogram(l, VarianceSite::attn_out_normed, config.hist_lengths,
                                              hist[l][1], config.hist_bins));
    }
  }
  return out;
}

std::string variance_csv(const VarianceResult& r) {
  std::string s =
      "length,seq_len,layer,sublayer,site,head,rows,features,mean_feature_std,global_mean,"
      "global_var,global_std\n";
  for (const VarianceRow& row : r.rows) {
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", row.length, row.seq_len, row.layer,
                     row.sublayer, to_string(row.site),
                     row.head >= 0 ? std::to_string(row.head) : "", row.stats.rows,
                     row.stats.features, number_text(row.stats.mean_feature_std),
                     number_text(row.stats.global_mean), number_text(row.stats.global_var),
                     number_text(row.stats.global_std));
  }
  return s;
}

std::string variance_fit_csv(const VarianceResult& r) {
  std::string s =
      "layer,sublayer,site,head,points,slope,slope_ci_low,slope_ci_high,slope_se,intercept,r2\n";
  for (const VarianceFit& f : r.fits) {
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", f.layer, f.sublayer, to_string(f.site),
                     f.head >= 0 ? std::to_string(f.head) : "", f.fit.points,
                     number_text(f.fit.slope), number_text(f.fit.slope_ci_low),
                     number_text(f.fit.slope_ci_high), number_text(f.fit.slope_se),
                     number_text(f.fit.intercept), number_text(f.fit.r2));
  }
  return s;
}

std::string variance_hist_csv(const VarianceResult& r) {
  std::string s = "layer,site,length,bin,bin_low,bin_high,count,density\n";
  for (const VarianceHistogram& h : r.histograms) {
    for (size_t k = 0; k < h.lengths.size(); ++k) {
      for (size_t b = 0; b + 1 < h.edges.size(); ++b) {
        s += fmt::format("{},{},{},{},{},{},{},{}\n", h.layer, to_string(h.site), h.lengths[k], b,
                         number_text(h.edges[b]), number_text(h.edges[b + 1]), h.counts[k][b],
                         number_text(h.density[k][b]));
      }
    }
  }
  return s;
}

nlohmann::json variance_json(const VarianceResult& r) {
  const nlohmann::json lengths = sweep_lengths_json(r.lengths);
  nlohmann::json rows = nlohmann::json::array();
  for (const VarianceRow& row : r.rows) {
    nlohmann::json j = summary_json(row.stats);
    j["length"] = row.length;
    j["seq_len"] = row.seq_len;
    j["layer"] = row.layer;
    j["sublayer"] = row.sublayer;
    j["site"] = to_string(row.site);
    j["head"] = row.head >= 0 ? nlohmann::json(row.head) : nlohmann::json(nullptr);
    rows.push_back(j);
  }
  nlohmann::json fits = nlohmann::json::array();
  for (const VarianceFit& f : r.fits) {
    fits.push_back({{"layer", f.layer},
                    {"sublayer", f.sublayer},
                    {"site", to_string(f.site)},
                    {"head", f.head >= 0 ? nlohmann::json(f.head) : nlohmann::json(nullptr)},
                    {"points", f.fit.points},
                    {"slope", number_json(f.fit.slope)},
                    {"slope_ci_low", number_json(f.fit.slope_ci_low)},
                    {"slope_ci_high", number_json(f.fit.slope_ci_high)},
                    {"slope_se", number_json(f.fit.slope_se)},
                    {"intercept", number_json(f.fit.intercept)},
                    {"r2", number_json(f.fit.r2)}});
  }
  nlohmann::json hists = nlohmann::json::array();
  for (const VarianceHistogram& h : r.histograms) {
    nlohmann::json per = nlohmann::json::array();
    for (size_t k = 0; k < h.lengths.size(); ++k) {
      per.push_back({{"length", h.lengths[k]},
                     {"values", h.values[k]},
                     {"counts", h.counts[k]},
                     {"density", h.density[k]}});
    }
    hists.push_back(
        {{"layer", h.layer}, {"site", to_string(h.site)}, {"edges", h.edges}, {"lengths", per}});
  }
  return {{"norm_after", r.norm_after},
          {"lengths", lengths},
          {"rows", rows},
          {"fits", fits},
          {"histograms", hists}};
}

std::string format_variance_table(const VarianceResult& r) {
  std::vector<int> layers = {0};
  if (r.layers > 1) layers.push_back(r.layers - 1);
  const bool normed = r.norm_after != "none";
  // Two statistics, named apart: the mean over features of each feature's std across the
  // measured positions, and the std of every value pooled (sqrt of global_var).
  std::string s =
      "feat std: the mean over features of each feature's std; global std: the std of all "
      "values pooled\n";
  s += fmt::format("{:>8} {:>8}", "length", "T");
  for (int l : layers) {
    s += fmt::format("  {:>18}", fmt::format("L{} feat std(attn)", l));
    if (normed) s += fmt::format("  {:>20}", fmt::format("L{} feat std(normed)", l));
    s += fmt::format("  {:>20}", fmt::format("L{} global std(attn)", l));
  }
  s += fmt::format("  {:>8}\n", "seconds");
  for (size_t li = 0; li < r.lengths.size(); ++li) {
    const SweepLength& len = r.lengths[li];
    s += fmt::format("{:>8} {:>8}", len.length, len.seq_len);
    for (int l : layers) {
      const VarianceRow* y = nullptr;
      const VarianceRow* z = nullptr;
      for (const VarianceRow& row : r.rows) {
        if (row.length != len.length || row.layer != l) continue;
        if (row.site == VarianceSite::attn_out) y = &row;
        if (row.site == VarianceSite::attn_out_normed) z = &row;
      }
      s += fmt::format("  {:>18}", y ? number_text(y->stats.mean_feature_std) : "");
      if (normed) s += fmt::format("  {:>20}", z ? number_text(z->stats.mean_feature_std) : "-");
      s += fmt::format("  {:>20}", y ? number_text(std::sqrt(y->stats.global_var)) : "");
    }
    s += fmt::format("  {:>8.2f}\n", len.seconds);
  }
  s += fmt::format("\nfit of ln(mean per-feature std) against ln(length), {} lengths:\n",
                   r.lengths.size());
  s += fmt::format("{:>6}  {:<16} {:>9}  {:>22}  {:>7}\n", "layer", "site", "slope", "95% interval",
                   "r2");
  for (const VarianceFit& f : r.fits) {
    if (f.site == VarianceSite::head) continue;
    s += fmt::format(
        "{:>6}  {:<16} {:>9}  {:>22}  {:>7}\n", f.layer, to_string(f.site),
        number_text(f.fit.slope),
        fmt::format("[{}, {}]", number_text(f.fit.slope_ci_low), number_text(f.fit.slope_ci_high)),
        number_text(f.fit.r2));
  }
  return s;
}

}  // namespace normlab
