// Metrics accumulated over evaluation sequences, each with a 95% confidence interval.
//
//   mean metrics (TVD, ...):   mean ± 1.96 · s / sqrt(n)            (normal approximation)
//   proportions (accuracy):    Wilson score interval at z = 1.96
//   ROC AUC:                   the Mann–Whitney statistic (ties count 1/2), with the
//                              Hanley & McNeil (1982) standard error, ± 1.96 · SE, clipped to
//                              [0, 1]
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace normlab {

enum class MetricKind { mean, proportion, auc };

struct MetricResult {
  std::string name;
  MetricKind kind = MetricKind::mean;
  double value = 0;   // mean, proportion or AUC
  double ci_low = 0;  // 95% interval
  double ci_high = 0;
  int64_t count = 0;  // sequences (AUC: positives + negatives)
};

// The values a metric can take, by name: proportions, TVD and ROC AUC lie in [0, 1]; losses
// and bits per character in [0, ∞); anything else is unbounded. Intervals across seeds are
// cut to these bounds (the true mean lies within them, so the cut interval covers it as often).
struct MetricBounds {
  double low, high;
};
MetricBounds metric_bounds(const std::string& name);

// Which way a metric improves, for axis labels: "higher is better" (accuracy, ROC AUC,
// all_legal), "lower is better" (TVD, losses, bits per character), "" when it has no better side.
std::string better_direction(const std::string& name);

// A summary table's cell for a mean across seeds and its 95% interval cut to the metric's
// bounds: "0.999 [0.996, 1.000]", the same form in every cell of a column; "0.999" alone
// without an interval (one seed).
std::string interval_cell(double mean, double low, double high);

class MetricAccumulator {
 public:
  // One sequence's value of a mean metric.
  void add_mean(const std::string& name, double value);
  // One sequence's success or failure.
  void add_proportion(const std::string& name, bool success);
  // One sequence's classifier score and true label, for ROC AUC.
  void add_auc(const std::string& name, double score, bool positive);

  // Results in the order the metrics were first added.
  std::vector<MetricResult> results() const;

 private:
  struct Series {
    MetricKind kind;
    std::vector<double> values;  // mean, proportion (0/1)
    std::vector<double> scores;  // auc
    std::vector<bool> labels;    // auc
  };
  Series& series(const std::string& name, MetricKind kind);
  std::vector<std::string> order_;
  std::map<std::string, Series> series_;
};

// ROC AUC of scores against labels (Mann–Whitney U / (n+ n−), ties 1/2). NaN if one class
// is absent.
double roc_auc(const std::vector<double>& scores, const std::vector<bool>& labels);

// Mean ± 1.96 · sample std / sqrt(n) over values (interval of width 0 when n < 2).
MetricResult mean_interval(const std::string& name, const std::vector<double>& values);

}  // namespace normlab
