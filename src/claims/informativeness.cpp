// Design rule D1 (claims/informativeness.hpp, docs/claims.md "Design rules").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/claims/evaluate.hpp"
#include "normlab/claims/informativeness.hpp"
#include "normlab/eval/evaluator.hpp"
#include "tasks/chomsky/blind_answer.hpp"

namespace normlab::claims {

namespace {

constexpr double kMarginShare = 0.05;  // ε = 0.05 · |c − f|
constexpr int kInformativeNeeded = 2;

bool selects_beyond_training(const Term& t) {
  const auto it = t.filter.find("length");
  return it != t.filter.end() && it->second.kind == FilterValue::Kind::beyond_training;
}

// Where m sits: within ε of the ceiling c (or past it), within ε of the floor f (or past it,
// worse than chance), or strictly between f + ε and c − ε (f − ε and c + ε when c < f, a
// lower-is-better metric). With ε = 0.05 · |c − f| no m is within ε of both.
Place place_of(double m, double f, double c, double margin) {
  const bool higher_is_better = c > f;
  const double to_ceiling = higher_is_better ? c - m : m - c;  // ≥ 0 below a perfect score
  const double above_floor = higher_is_better ? m - f : f - m;
  if (to_ceiling <= margin) return Place::ceiling;
  if (above_floor <= margin) return Place::floor;
  return Place::informative;
}

// The rows of `table` that match every condition of term `t`, with `metric` in place of the
// term's own metric condition.
template <class Visit>
void for_each_matching_row(const Term& t, const CsvTable& table, const StudyFacts& facts,
                           const std::string& metric, Visit&& visit) {
  std::vector<std::pair<size_t, const FilterValue*>> conditions;
  for (const auto& [column, f] : t.filter) {
    if (column != "metric") conditions.emplace_back(table.column(column), &f);
  }
  const size_t metric_column = table.column("metric");
  const std::optional<StudyFacts> known = facts;
  for (const std::vector<std::string>& row : table.rows) {
    if (row[metric_column] != metric) continue;
    const bool all = std::all_of(conditions.begin(), conditions.end(), [&](const auto& cond) {
      return filter_matches(*cond.second, row[cond.first], known);
    });
    if (all) visit(row);
  }
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// The evaluation settings of a study's experiment.json at `lengths`: evaluate() draws the same
// samples from them (seeded by the eval seed and the length only).
EvalConfig eval_config_of(const nlohmann::json& experiment, const std::vector<int64_t>& lengths) {
  const nlohmann::json& eval = experiment.at("eval");
  EvalConfig config;
  config.lengths = lengths;
  config.samples = eval.at("samples").get<int64_t>();
  config.seed = eval.at("seed").get<uint64_t>();
  config.max_rows = eval.value("max_rows", config.max_rows);
  return config;
}

// The chance rows the table lacks, from the study's task and eval settings: the same samples,
// the uniform predictor.
std::map<int64_t, double> recomputed_chance(const nlohmann::json& experiment,
                                            const std::string& chance_row,
                                            const std::vector<int64_t>& lengths) {
  const std::unique_ptr<Task> task = make_task_from_json(experiment.at("task"));
  std::map<int64_t, double> out;
  for (const LengthResult& r : evaluate_chance(*task, eval_config_of(experiment, lengths))) {
    for (const MetricResult& m : r.metrics) {
      if (m.name == chance_row) out[r.length] = m.value;
    }
  }
  return out;
}

// At each length, the accuracy of the best answer that does not read the input on the study's
// own evaluation sequences (BlindAnswer): every seed is scored on the same sequences, so a
// model that ignores the input scores at most this there, whatever the sampling made them.
std::map<int64_t, double> blind_answer_accuracy(const nlohmann::json& experiment,
                                                const std::vector<int64_t>& lengths) {
  const std::unique_ptr<Task> task = make_task_from_json(experiment.at("task"));
  const auto* chomsky = dynamic_cast<const ChomskyTask*>(task.get());
  if (chomsky == nullptr) {
    throw std::logic_error(task->label() + " has no blind answer: not a Chomsky-hierarchy task");
  }
  const EvalConfig config = eval_config_of(experiment, lengths);
  std::map<int64_t, double> out;
  for (int64_t n : lengths) {
    BlindAnswer answer(*chomsky, n);
    for_each_eval_batch(
        *task, config, n,
        [&](const Batch& batch, int64_t, const std::vector<int64_t>&) { answer.add(batch); });
    out[n] = answer.accuracy();
  }
  return out;
}

}  // namespace

std::string to_string(Place p) {
  switch (p) {
    case Place::informative:
      return "informative";
    case Place::ceiling:
      return "ceiling";
    case Place::floor:
      return "floor";
  }
  return "?";
}

int Informativeness::informative() const {
  return static_cast<int>(std::count_if(lengths.begin(), lengths.end(), [](const LengthCheck& l) {
    return l.place == Place::informative;
  }));
}

std::optional<Verdict> Informativeness::untestable() const {
  if (!applies || informative() >= kInformativeNeeded) return std::nullopt;
  const auto at = [&](Place p) {
    return std::count_if(lengths.begin(), lengths.end(),
                         [&](const LengthCheck& l) { return l.place == p; });
  };
  return at(Place::ceiling) > at(Place::floor) ? Verdict::untestable_ceiling
                                               : Verdict::untestable_floor;
}

std::string Informativeness::summary() const {
  std::vector<std::string> ceiling, floor;
  for (const LengthCheck& l : lengths) {
    if (l.place == Place::ceiling) ceiling.push_back(std::to_string(l.length));
    if (l.place == Place::floor) floor.push_back(std::to_string(l.length));
  }
  std::string s =
      fmt::format("{} of {} length(s) beyond training informative (D1 needs {}): the baseline's {}",
                  informative(), lengths.size(), kInformativeNeeded, metric);
  if (!ceiling.empty())
    s += fmt::format(" is within ε of the ceiling at n = {}", fmt::join(ceiling, ", "));
  if (!ceiling.empty() && !floor.empty()) s += " and";
  if (!floor.empty())
    s += fmt::format(" is within ε of the floor at n = {}", fmt::join(floor, ", "));
  if (ceiling.empty() && floor.empty()) s += " lies between floor and ceiling everywhere";
  return s;
}

bool informativeness_applies(const Claim& c) {
  if (std::filesystem::path(c.source).filename() != "results.csv") return false;
  const bool has_baseline =
      std::any_of(c.terms.begin(), c.terms.end(), [](const Term& t) { return t.weight < 0; });
  return has_baseline && std::any_of(c.terms.begin(), c.terms.end(), selects_beyond_training);
}

Informativeness check_informativeness(const Claim& c, const CsvTable& table,
                                      const StudyFacts& facts, const nlohmann::json& experiment) {
  Informativeness out;
  out.applies = informativeness_applies(c);
  if (!out.applies) return out;
  const auto fail = [&](const std::string& why) {
    return InputError(
        fmt::format("{}: claim '{}': design rule D1: {}", table.file.string(), c.id, why));
  };

  // The baseline arm: the terms with negative weight, all on one metric.
  std::vector<const Term*> baseline;
  std::vector<std::string> written;
  for (const Term& t : c.terms) {
    if (t.weight >= 0) continue;
    const auto metric = t.filter.find("metric");
    if (metric == t.filter.end() || metric->second.kind != FilterValue::Kind::text) {
      throw fail(fmt::format("the baseline term {} selects no single metric", t.description));
    }
    if (!out.metric.empty() && metric->second.text != out.metric) {
      throw fail(fmt::format("the baseline terms select two metrics, {} and {}", out.metric,
                             metric->second.text));
    }
    out.metric = metric->second.text;
    baseline.push_back(&t);
    written.push_back(t.description);
  }
  out.baseline = fmt::format("{}", fmt::join(written, "; "));

  // m(n): per length, per pair the mean of the baseline's rows, then the mean over pairs.
  const size_t length_column = table.column("length"), pair_column = table.column(c.pair_by);
  std::map<int64_t, std::map<std::string, std::vector<double>>> by_length;
  const nlohmann::json& task = experiment.at("task");
  for (const Term* t : baseline) {
    const size_t value_column = table.column(t->value);
    for_each_matching_row(*t, table, facts, out.metric, [&](const std::vector<std::string>& row) {
      const auto n = cell_integer(row[length_column]);
      const auto v = cell_number(row[value_column]);
      if (!n || !v)
        throw fail(fmt::format("a baseline row has length '{}' and value '{}'", row[length_column],
                               row[value_column]));
      by_length[*n][row[pair_column]].push_back(*v);
    });
  }
  if (by_length.empty()) throw fail("the baseline terms match no rows");
  std::vector<int64_t> lengths;
  for (const auto& [n, pairs] : by_length) lengths.push_back(n);

  // f per length: a constant of the task, the mean of the chance rows at n, or the best blind
  // answer's accuracy on the study's sequences at n. The kind and its rule are the same at
  // every length.
  std::map<int64_t, MetricScale> scales;
  for (int64_t n : lengths) {
    const std::optional<MetricScale> s = metric_scale(task, out.metric, n);
    if (!s) {
      throw fail(fmt::format("docs/tasks.md defines no floor and ceiling for {}'s {}",
                             task.at("name").get<std::string>(), out.metric));
    }
    scales[n] = *s;
  }
  const MetricScale& kind = scales.begin()->second;
  out.floor_rule = kind.rule;
  std::map<int64_t, double> floor_at;
  if (kind.blind_answer) {
    floor_at = blind_answer_accuracy(experiment, lengths);
  } else if (!kind.chance_row.empty()) {
    std::map<int64_t, std::vector<double>> chance_rows;
    for (const Term* t : baseline) {
      const size_t value_column = table.column(t->value);
      for_each_matching_row(*t, table, facts, kind.chance_row,
                            [&](const std::vector<std::string>& row) {
                              const auto n = cell_integer(row[length_column]);
                              const auto v = cell_number(row[value_column]);
                              if (n && v) chance_rows[*n].push_back(*v);
                            });
    }
    if (chance_rows.empty()) {
      floor_at = recomputed_chance(experiment, kind.chance_row, lengths);
      out.floor_rule = fmt::format(
          "the uniform-over-the-vocabulary predictor's {} on the study's evaluation samples, "
          "recomputed from experiment.json (the table has no {} rows)",
          out.metric, kind.chance_row);
    } else {
      for (const auto& [n, values] : chance_rows) floor_at[n] = mean_of(values);
    }
  } else {
    for (const auto& [n, s] : scales) floor_at[n] = s.floor;
  }

  for (int64_t n : lengths) {
    LengthCheck l;
    l.length = n;
    std::vector<double> pair_means;
    for (const auto& [pair, values] : by_length[n]) pair_means.push_back(mean_of(values));
    l.baseline = mean_of(pair_means);
    l.ceiling = scales[n].ceiling;
    const auto it = floor_at.find(n);
    if (it == floor_at.end()) throw fail(fmt::format("no {} row at length {}", kind.chance_row, n));
    l.floor = it->second;
    if (!std::isfinite(l.baseline) || !std::isfinite(l.floor) || l.floor == l.ceiling) {
      throw fail(
          fmt::format("at length {} the baseline mean {} and floor {} (ceiling {}) leave "
                      "no span to place it in",
                      n, l.baseline, l.floor, l.ceiling));
    }
    l.margin = kMarginShare * std::abs(l.ceiling - l.floor);
    l.place = place_of(l.baseline, l.floor, l.ceiling, l.margin);
    out.lengths.push_back(l);
  }
  return out;
}

}  // namespace normlab::claims
