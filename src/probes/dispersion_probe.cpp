#include "normlab/probes/dispersion_probe.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/parallel.hpp"
#include "normlab/io/number_text.hpp"
#include "normlab/probes/attention_stats.hpp"
#include "probes/running_moments.hpp"

namespace normlab {
namespace {

struct HeadAcc {
  RunningMoments max_weight, entropy, uniform, uniform_max;
};

}  // namespace

DispersionResult run_dispersion_probe(Model<float>& model, const ProbeInput& input,
                                      SweepConfig config,
                                      const std::function<void(const SweepLength&)>& progress) {
  const ModelConfig& c = model.config();
  validate_sweep(c, input, config);
  const int L = c.layers, H = c.heads;
  // acc[length][layer][head]
  std::vector<std::vector<std::vector<HeadAcc>>> acc(
      config.lengths.size(), std::vector<std::vector<HeadAcc>>(L, std::vector<HeadAcc>(H)));
  std::vector<AttentionRowStats> stats;

  DispersionResult out;
  out.layers = L;
  out.heads = H;
  out.lengths = run_length_sweep(
      model, input, config,
      [&](const SweepSample& s) {
        const SublayerTrace<float>& t = *s.trace;
        const AttentionGeometry g = attention_geometry(c, t);
        const int64_t Q = static_cast<int64_t>(s.query->size());
        stats.resize(Q * H);
        // One task per (query, head); each writes its own slot, so the sums below run in the
        // same order with any number of threads.
        parallel_for(Q * H, [&](int64_t task) {
          thread_local std::vector<double> scratch;
          const int64_t q = task / H;
          const int h = static_cast<int>(task % H);
          stats[task] = attention_query_stats(g, t.qkv, (*s.query)[q], h, scratch);
        });
        auto& heads = acc[s.length_index][s.layer];
        for (int64_t task = 0; task < Q * H; ++task) {
          HeadAcc& a = heads[task % H];
          const AttentionRowStats& r = stats[task];
          a.max_weight.add(r.max_weight);
          a.entropy.add(r.entropy);
          a.uniform.add(std::log(static_cast<double>(r.keys)));
          a.uniform_max.add(1.0 / r.keys);
        }
      },
      progress);

  const int spl = c.sublayers_per_layer();
  for (size_t li = 0; li < out.lengths.size(); ++li) {
    for (int l = 0; l < L; ++l) {
      for (int h = 0; h < H; ++h) {
        const HeadAcc& a = acc[li][l][h];
        DispersionRow row;
        row.length = out.lengths[li].length;
        row.seq_len = out.lengths[li].seq_len;
        row.layer = l;
        row.sublayer = l * spl;
        row.head = h;
        row.rows = a.max_weight.n;
        row.max_weight_mean = a.max_weight.mean;
        row.max_weight_sd = a.max_weight.sd();
        row.entropy_mean = a.entropy.mean;
        row.entropy_sd = a.entropy.sd();
        row.uniform_entropy = a.uniform.mean;
        row.uniform_max_weight = a.uniform_max.mean;
        out.rows.push_back(row);
      }
    }
  }
  return out;
}

std::string dispersion_csv(const DispersionResult& r) {
  std::string s =
      "length,seq_len,layer,sublayer,head,rows,max_weight_mean,max_weight_sd,entropy_mean,"
      "entropy_sd,uniform_entropy,uniform_max_weight\n";
  for (const DispersionRow& row : r.rows) {
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", row.length, row.seq_len, row.layer,
                     row.sublayer, row.head, row.rows, number_text(row.max_weight_mean),
                     number_text(row.max_weight_sd), number_text(row.entropy_mean),
                     number_text(row.entropy_sd), number_text(row.uniform_entropy),
                     number_text(row.uniform_max_weight));
  }
  return s;
}

nlohmann::json dispersion_json(const DispersionResult& r) {
  const nlohmann::json lengths = sweep_lengths_json(r.lengths);
  nlohmann::json rows = nlohmann::json::array();
  for (const DispersionRow& row : r.rows) {
    rows.push_back({{"length", row.length},
                    {"seq_len", row.seq_len},
                    {"layer", row.layer},
                    {"sublayer", row.sublayer},
                    {"head", row.head},
                    {"rows", row.rows},
                    {"max_weight_mean", number_json(row.max_weight_mean)},
                    {"max_weight_sd", number_json(row.max_weight_sd)},
                    {"entropy_mean", number_json(row.entropy_mean)},
                    {"entropy_sd", number_json(row.entropy_sd)},
                    {"uniform_entropy", number_json(row.uniform_entropy)},
                    {"uniform_max_weight", number_json(row.uniform_max_weight)}});
  }
  return {{"lengths", lengths}, {"rows", rows}};
}

std::string format_dispersion_table(const DispersionResult& r) {
  std::vector<int> layers = {0};
  if (r.layers > 1) layers.push_back(r.layers - 1);
  std::string s = fmt::format("{:>8} {:>8}  {:>9}", "length", "T", "ln keys");
  for (int l : layers) {
    s +=
        fmt::format("  {:>12}  {:>12}", fmt::format("L{} max w", l), fmt::format("L{} entropy", l));
  }
  s += fmt::format("  {:>8}\n", "seconds");
  for (const SweepLength& len : r.lengths) {
    double uniform = 0;
    std::vector<double> mw(layers.size(), 0.0), ent(layers.size(), 0.0);
    for (const DispersionRow& row : r.rows) {
      if (row.length != len.length) continue;
      uniform = row.uniform_entropy;
      for (size_t k = 0; k < layers.size(); ++k) {
        if (row.layer != layers[k]) continue;
        mw[k] += row.max_weight_mean / r.heads;
        ent[k] += row.entropy_mean / r.heads;
      }
    }
    s += fmt::format("{:>8} {:>8}  {:>9}", len.length, len.seq_len, number_text(uniform));
    for (size_t k = 0; k < layers.size(); ++k) {
      s += fmt::format("  {:>12}  {:>12}", number_text(mw[k]), number_text(ent[k]));
    }
    s += fmt::format("  {:>8.2f}\n", len.seconds);
  }
  if (r.heads > 1)
    s += fmt::format("(max weight and entropy averaged over the {} heads)\n", r.heads);
  return s;
}

}  // namespace normlab
