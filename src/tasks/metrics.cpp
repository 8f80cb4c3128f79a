#include "normlab/tasks/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace normlab {
namespace {
constexpr double kZ = 1.959963984540054;  // 97.5% normal quantile
}

MetricAccumulator::Series& MetricAccumulator::series(const std::string& name, MetricKind kind) {
  auto it = series_.find(name);
  if (it == series_.end()) {
    order_.push_back(name);
    it = series_.emplace(name, Series{kind, {}, {}, {}}).first;
  } else if (it->second.kind != kind) {
    throw std::logic_error("metric " + name + " added with two different kinds");
  }
  return it->second;
}

void MetricAccumulator::add_mean(const std::string& name, double value) {
  series(name, MetricKind::mean).values.push_back(value);
}

void MetricAccumulator::add_proportion(const std::string& name, bool success) {
  series(name, MetricKind::proportion).values.push_back(success ? 1.0 : 0.0);
}

void MetricAccumulator::add_auc(const std::string& name, double score, bool positive) {
  Series& s = series(name, MetricKind::auc);
  s.scores.push_back(score);
  s.labels.push_back(positive);
}

MetricResult mean_interval(const std::string& name, const std::vector<double>& values) {
  MetricResult r;
  r.name = name;
  r.kind = MetricKind::mean;
  r.count = static_cast<int64_t>(values.size());
  if (values.empty()) return r;
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  const double half = values.size() > 1 ? kZ * std::sqrt(ss / (n - 1)) / std::sqrt(n) : 0.0;
  r.value = mean;
  r.ci_low = mean - half;
  r.ci_high = mean + half;
  return r;
}

double roc_auc(const std::vector<double>& scores, const std::vector<bool>& labels) {
  // Rank-based Mann–Whitney: sort by score, average ranks over ties.
  const size_t n = scores.size();
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  double rank_sum_pos = 0;
  size_t pos = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && scores[idx[j]] == scores[idx[i]]) ++j;
    const double avg_rank = (i + 1 + j) / 2.0;  // ranks i+1 .. j
    for (size_t k = i; k < j; ++k) {
      if (labels[idx[k]]) {
        rank_sum_pos += avg_rank;
        ++pos;
      }
    }
    i = j;
  }
  const size_t neg = n - pos;
  if (pos == 0 || neg == 0) return std::nan("");
  const double u = rank_sum_pos - pos * (pos + 1) / 2.0;
  return u / (static_cast<double>(pos) * neg);
}

std::string interval_cell(double mean, double low, double high) {
  if (!std::isfinite(low) || !std::isfinite(high)) return fmt::format("{:.3f}", mean);
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", mean, low, high);
}

MetricBounds metric_bounds(const std::string& name) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (const char* unit : {"accuracy", "tvd", "tvd_chance", "roc_auc", "all_legal"}) {
    if (name == unit) return {0.0, 1.0};
  }
  if (name == "loss" || name == "bpc") return {0.0, kInf};
  return {-kInf, kInf};
}

std::string better_direction(const std::string& name) {
  for (const char* up : {"accuracy", "roc_auc", "all_legal"}) {
    if (name == up) return "higher is better";
  }
  for (const char* down : {"tvd", "tvd_chance", "loss", "bpc"}) {
    if (name == down) return "lower is better";
  }
  return "";
}

std::vector<MetricResult> MetricAccumulator::results() const {
  std::vector<MetricResult> out;
  for (const std::string& name : order_) {
    const Series& s = series_.at(name);
    if (s.kind == MetricKind::mean) {
      out.push_back(mean_interval(name, s.values));
      continue;
    }
    MetricResult r;
    r.name = name;
    r.kind = s.kind;
    if (s.kind == MetricKind::proportion) {
      // Wilson score interval.
      const double n = static_cast<double>(s.values.size());
      r.count = static_cast<int64_t>(s.values.size());
      if (n > 0) {
        const double p = std::accumulate(s.values.begin(), s.values.end(), 0.0) / n;
        const double z2 = kZ * kZ;
        const double center = (p + z2 / (2 * n)) / (1 + z2 / n);
        const double half = kZ * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
        r.value = p;
        r.ci_low = std::max(0.0, center - half);
        r.ci_high = std::min(1.0, center + half);
      }
    } else {
      // Hanley & McNeil (1982): SE² = (A(1−A) + (n+ − 1)(Q1 − A²) + (n− − 1)(Q2 − A²)) / (n+ n−)
      r.count = static_cast<int64_t>(s.scores.size());
      const double a = roc_auc(s.scores, s.labels);
      double npos = 0;
      for (bool l : s.labels) npos += l ? 1 : 0;
      const double nneg = static_cast<double>(s.labels.size()) - npos;
      r.value = a;
      if (std::isnan(a)) {
        r.ci_low = r.ci_high = a;
      } else {
        const double q1 = a / (2 - a), q2 = 2 * a * a / (1 + a);
        const double se = std::sqrt(std::max(
            0.0,
            (a * (1 - a) + (npos - 1) * (q1 - a * a) + (nneg - 1) * (q2 - a * a)) / (npos * nneg)));
        r.ci_low = std::max(0.0, a - kZ * se);
        r.ci_high = std::min(1.0, a + kZ * se);
      }
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace normlab
