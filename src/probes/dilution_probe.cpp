#include "normlab/probes/dilution_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/io/number_text.hpp"
#include "normlab/probes/probe_input.hpp"
#include "probes/running_moments.hpp"

namespace normlab {
namespace {

constexpr int64_t kSequencesPerCall = 4096;

// gap(ℓ) = mean_{j∈A} ℓ_j − mean_{j∈P} ℓ_j over the elements 1..v; present[j] marks P.
double gap_of(const double* logit, const std::vector<char>& present, int v) {
  double sum_a = 0, sum_p = 0;
  int na = 0, np = 0;
  for (int j = 1; j <= v; ++j) {
    if (present[j]) {
      sum_p += logit[j];
      ++np;
    } else {
      sum_a += logit[j];
      ++na;
    }
  }
  return sum_a / na - sum_p / np;
}

// ℓ_j = scale_j · ⟨U_j, y⟩ for j = 0..V−1 (U (V, D) row-major; scale null: 1).
void unembed(const float* U, const float* scale, const float* y, int V, int D, double* out) {
  for (int j = 0; j < V; ++j) {
    double s = 0;
    for (int d = 0; d < D; ++d) s += static_cast<double>(U[int64_t{j} * D + d]) * y[d];
    out[j] = scale != nullptr ? s * scale[j] : s;
  }
}

}  // namespace

std::string to_string(DilutionSite s) {
  switch (s) {
    case DilutionSite::logits:
      return "logits";
    case DilutionSite::branch:
      return "branch";
    case DilutionSite::branch_normed:
      return "branch_normed";
  }
  return "?";
}

bool is_set_complement(const Task& task) {
  return task.label().rfind("set_complement(", 0) == 0;
}

void validate_dilution(const ModelConfig& model, const Task& task, DilutionConfig& config) {
  if (!is_set_complement(task)) {
    throw UsageError(fmt::format(
        "the dilution probe needs a set_complement model; this one's task is {}", task.label()));
  }
  if (model.vocab != task.vocab()) {
    throw UsageError(fmt::format("the model's vocabulary {} is not that of task {} ({})",
                                 model.vocab, task.label(), task.vocab()));
  }
  if (config.samples < 1) throw UsageError(fmt::format("--samples {} is below 1", config.samples));
  if (config.sizes.empty()) {
    const LengthRange r = task.length_range();
    for (int64_t s = r.min; s <= r.max; s += r.step) config.sizes.push_back(s);
  }
  std::sort(config.sizes.begin(), config.sizes.end());
  for (size_t k = 0; k < config.sizes.size(); ++k) {
    const int64_t s = config.sizes[k];
    if (k > 0 && s == config.sizes[k - 1]) {
      throw UsageError(fmt::format("size {} is listed twice in --sizes", s));
    }
    task.check_length(s);
    if (model.pos == PosEncoding::learned && task.sequence_length(s) > model.max_len) {
      throw UsageError(fmt::format(
          "size {} (sequence length {}) exceeds the model's learned positions (max-len {})", s,
          task.sequence_length(s), model.max_len));
    }
  }
}

DilutionResult run_dilution_probe(Model<float>& model, const Task& task, DilutionConfig config,
                                  const std::function<void(int64_t, double)>& progress) {
  const ModelConfig& c = model.config();
  validate_dilution(c, task, config);
  const auto t_start = std::chrono::steady_clock::now();
  const int V = c.vocab, D = c.width, v = V - 1;
  const ProbeInput input = ProbeInput::from_task(task);

  DilutionResult r;
  r.v = v;
  r.attention_sublayer = -1;
  for (int i = 0; i < model.num_sublayers(); ++i) {
    if (model.sublayer_params()[i].is_attention) r.attention_sublayer = i;
  }
  const int att = r.attention_sublayer;
  const bool normed = model.scheme().sublayers[att].norm_out;
  r.norm_after = normed ? to_string(c.norm) : "none";
  const TensorSpec* u_spec = model.layout().find(c.tied ? "embed.weight" : "unembed.weight");
  const TensorSpec* scale_spec = model.layout().find("logit_scale");
  const float* U = model.params().data() + u_spec->offset;
  // nGPT's s_z as the model uses it: the stored values times their factor (ngpt_scales).
  std::vector<float> scale_used;
  if (scale_spec != nullptr) {
    const float* stored = model.params().data() + scale_spec->offset;
    const double f = ngpt_scales(c).s_z.factor;
    scale_used.resize(V);
    for (int j = 0; j < V; ++j) scale_used[j] = static_cast<float>(stored[j] * f);
  }
  const float* scale = scale_spec != nullptr ? scale_used.data() : nullptr;

  std::vector<DilutionSite> sites = {DilutionSite::logits, DilutionSite::branch};
  if (normed) sites.push_back(DilutionSite::branch_normed);
  std::vector<std::vector<double>> fit_x(sites.size()), fit_y(sites.size());

  std::vector<float> y, z;       // (Q, D) at the query rows
  std::vector<double> logit(V);  // one row of logits in double
  std::vector<char> present(V + 1);
  for (const int64_t s : config.sizes) {
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t T = task.sequence_length(s);
    Rng rng(config.seed ^ (static_cast<uint64_t>(s) * 0x9e3779b97f4a7c15ULL));
    std::vector<RunningMoments> m(sites.size());
    for (int64_t done = 0; done < config.samples; done += kSequencesPerCall) {
      const int64_t B = std::min(kSequencesPerCall, config.samples - done);
      const Batch batch = input.make_batch(s, B, rng);
      const std::vector<int64_t> query = input.query_rows(batch, 1);  // (B) the query rows
      const int64_t Q = static_cast<int64_t>(query.size());
      y.assign(Q * D, 0.0f);
      z.assign(Q * D, 0.0f);
      const float* logits = model.forward_rows(
          batch.tokens.data(), B, batch.len, batch.fields, query,
          [&](const SublayerTrace<float>& t) {
            if (t.index != att) return;
            // The trace's rows are ascending and hold every query row.
            for (int64_t q = 0; q < Q; ++q) {
              const int64_t k =
                  std::lower_bound(t.row_ids, t.row_ids + t.rows, query[q]) - t.row_ids;
              std::copy_n(t.branch + k * D, D, y.begin() + q * D);
              std::copy_n(t.branch_normed + k * D, D, z.begin() + q * D);
            }
          });
      for (int64_t q = 0; q < Q; ++q) {
        const int64_t b = query[q] / T;
        std::fill(present.begin(), present.end(), 0);
        for (int64_t j = 0; j < s; ++j) present[batch.tokens[(b * T + j) * batch.fields]] = 1;
        for (size_t k = 0; k < sites.size(); ++k) {
          if (sites[k] == DilutionSite::logits) {
            for (int j = 0; j < V; ++j) logit[j] = logits[q * V + j];
          } else {
            const float* src = (sites[k] == DilutionSite::branch ? y : z).data() + q * D;
            unembed(U, scale, src, V, D, logit.data());
          }
          m[k].add(gap_of(logit.data(), present, v));
        }
      }
    }
    for (size_t k = 0; k < sites.size(); ++k) {
      DilutionRow row;
      row.s = s;
      row.seq_len = T;
      row.site = sites[k];
      row.samples = m[k].n;
      row.gap = m[k].mean;
      row.gap_sd = m[k].n > 1 ? std::sqrt(m[k].m2 / (m[k].n - 1)) : kNaN;
      const double half = m[k].n > 1 ? student_t_quantile(0.975, static_cast<double>(m[k].n - 1)) *
                                           row.gap_sd / std::sqrt(static_cast<double>(m[k].n))
                                     : kNaN;
      row.gap_low = row.gap - half;
      row.gap_high = row.gap + half;
      r.rows.push_back(row);
      if (std::isfinite(row.gap) && row.gap != 0) {
        fit_x[k].push_back(std::log(static_cast<double>(s)));
        fit_y[k].push_back(std::log(std::abs(row.gap)));
      }
    }
    if (progress) {
      progress(s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  for (size_t k = 0; k < sites.size(); ++k)
    r.fits.push_back({sites[k], fit_line(fit_x[k], fit_y[k])});
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  return r;
}

std::string dilution_csv(const DilutionResult& r) {
  std::string s = "s,seq_len,site,samples,gap,gap_sd,gap_low,gap_high\n";
  for (const DilutionRow& row : r.rows) {
    s += fmt::format("{},{},{},{},{},{},{},{}\n", row.s, row.seq_len, to_string(row.site),
                     row.samples, number_text(row.gap), number_text(row.gap_sd),
                     number_text(row.gap_low), number_text(row.gap_high));
  }
  return s;
}

std::string dilution_fit_csv(const DilutionResult& r) {
  std::string s = "site,points,slope,slope_low,slope_high,slope_se,intercept,r2\n";
  for (const DilutionFit& f : r.fits) {
    s += fmt::format("{},{},{},{},{},{},{},{}\n", to_string(f.site), f.fit.points,
                     number_text(f.fit.slope), number_text(f.fit.slope_ci_low),
                     number_text(f.fit.slope_ci_high), number_text(f.fit.slope_se),
                     number_text(f.fit.intercept), number_text(f.fit.r2));
  }
  return s;
}

nlohmann::json dilution_json(const DilutionResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const DilutionRow& row : r.rows) {
    rows.push_back({{"s", row.s},
                    {"seq_len", row.seq_len},
                    {"site", to_string(row.site)},
                    {"samples", row.samples},
                    {"gap", number_json(row.gap)},
                    {"gap_sd", number_json(row.gap_sd)},
                    {"gap_low", number_json(row.gap_low)},
                    {"gap_high", number_json(row.gap_high)}});
  }
  nlohmann::json fits = nlohmann::json::array();
  for (const DilutionFit& f : r.fits) {
    fits.push_back({{"site", to_string(f.site)},
                    {"points", f.fit.points},
                    {"slope", number_json(f.fit.slope)},
                    {"slope_low", number_json(f.fit.slope_ci_low)},
                    {"slope_high", number_json(f.fit.slope_ci_high)},
                    {"slope_se", number_json(f.fit.slope_se)},
                    {"intercept", number_json(f.fit.intercept)},
                    {"r2", number_json(f.fit.r2)}});
  }
  return {{"v", r.v},
          {"attention_sublayer", r.attention_sublayer},
          {"norm_after", r.norm_after},
          {"rows", rows},
          {"fits", fits},
          {"seconds", r.seconds}};
}

std::string format_dilution_table(const DilutionResult& r) {
  std::vector<DilutionSite> sites;
  for (const DilutionFit& f : r.fits) sites.push_back(f.site);
  std::string s = fmt::format("{:>4}", "s");
  for (DilutionSite site : sites) s += fmt::format("  {:>34}", "gap " + to_string(site) + " [95%]");
  s += "\n";
  for (size_t k = 0; k < r.rows.size(); k += sites.size()) {
    s += fmt::format("{:>4}", r.rows[k].s);
    for (size_t i = 0; i < sites.size(); ++i) {
      const DilutionRow& row = r.rows[k + i];
      s +=
          fmt::format("  {:>34}", fmt::format("{} [{}, {}]", number_text(row.gap),
                                              number_text(row.gap_low), number_text(row.gap_high)));
    }
    s += "\n";
  }
  s += "\nfit of ln|gap| against ln s:\n";
  s += fmt::format("{:<14} {:>9}  {:>22}  {:>7}\n", "site", "slope", "95% interval", "r2");
  for (const DilutionFit& f : r.fits) {
    s += fmt::format(
        "{:<14} {:>9}  {:>22}  {:>7}\n", to_string(f.site), number_text(f.fit.slope),
        fmt::format("[{}, {}]", number_text(f.fit.slope_ci_low), number_text(f.fit.slope_ci_high)),
        number_text(f.fit.r2));
  }
  return s;
}

}  // namespace normlab
