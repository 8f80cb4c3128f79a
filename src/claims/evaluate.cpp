#include "normlab/claims/evaluate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/json_file.hpp"
#include "normlab/optim/schedule.hpp"
#include "normlab/probes/line_fit.hpp"

namespace normlab::claims {
namespace fs = std::filesystem;

std::optional<double> cell_number(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  if (end != cell.c_str() + cell.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> cell_integer(const std::string& cell) {
  const std::optional<double> v = cell_number(cell);
  constexpr double kExact = 9007199254740992.0;  // 2^53: every integer up to it is a double
  if (!v || !(std::abs(*v) <= kExact) || std::floor(*v) != *v) return std::nullopt;
  return static_cast<int64_t>(*v);
}

bool filter_matches(const FilterValue& f, const std::string& cell,
                    const std::optional<StudyFacts>& facts) {
  switch (f.kind) {
    case FilterValue::Kind::text:
      return cell == f.text;
    case FilterValue::Kind::number: {
      const auto v = cell_number(cell);
      return v && *v == f.number;
    }
    case FilterValue::Kind::one_of:
      return std::any_of(f.choices.begin(), f.choices.end(),
                         [&](const FilterValue& c) { return filter_matches(c, cell, facts); });
    case FilterValue::Kind::beyond_training:
    case FilterValue::Kind::within_training: {
      const auto v = cell_number(cell);
      if (!v) return false;
      const bool beyond = *v > static_cast<double>(facts->max_train_length);
      return beyond == (f.kind == FilterValue::Kind::beyond_training);
    }
    case FilterValue::Kind::last_step:
    case FilterValue::Kind::decay_start: {
      const auto v = cell_number(cell);
      const int64_t step =
          f.kind == FilterValue::Kind::last_step ? facts->last_step : facts->decay_start;
      return v && *v == static_cast<double>(step);
    }
    case FilterValue::Kind::second_half: {
      const auto v = cell_number(cell);
      return v && 2 * *v > static_cast<double>(facts->last_step);
    }
  }
  return false;
}

namespace {

// A filter (or one of a list's choices) that compares against the study's facts.
bool is_special(const FilterValue& f) {
  if (f.kind == FilterValue::Kind::one_of) {
    return std::any_of(f.choices.begin(), f.choices.end(), is_special);
  }
  return f.kind != FilterValue::Kind::text && f.kind != FilterValue::Kind::number;
}

bool needs_study_facts(const Claim& c) {
  for (const Term& t : c.terms) {
    for (const auto& [column, f] : t.filter) {
      if (is_special(f)) return true;
    }
  }
  return false;
}

// Pairs sort numerically when every one is a number, else as text.
void sort_pairs(std::vector<std::string>& pairs) {
  const bool numeric = std::all_of(pairs.begin(), pairs.end(),
                                   [](const std::string& p) { return cell_number(p).has_value(); });
  std::sort(pairs.begin(), pairs.end(), [&](const std::string& a, const std::string& b) {
    return numeric ? *cell_number(a) < *cell_number(b) : a < b;
  });
}

}  // namespace

double reduce_values(Reduce r, const std::vector<double>& values, const std::vector<double>& x) {
  const size_t n = values.size();
  if (n == 0) throw std::invalid_argument("no rows");
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(n);
  switch (r) {
    case Reduce::mean:
      return mean;
    case Reduce::cv: {
      // Coefficient of variation of the rows themselves (e.g. the layers of one run), so the
      // standard deviation divides by n: the rows are the whole population, not a sample.
      if (n < 2) throw std::invalid_argument("cv needs at least 2 rows");
      if (mean == 0) throw std::invalid_argument("cv of values with mean 0");
      double ss = 0;
      for (double v : values) ss += (v - mean) * (v - mean);
      return std::sqrt(ss / static_cast<double>(n)) / mean;
    }
    case Reduce::max_over_min: {
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      if (!(*lo > 0)) throw std::invalid_argument("max_over_min needs positive values");
      return *hi / *lo;
    }
    case Reduce::loglog_slope: {
      // Least squares of log(value) on log(x): the exponent p of value ∝ x^p.
      std::vector<double> lx, ly;
      for (size_t i = 0; i < n; ++i) {
        if (!(values[i] > 0) || !(x[i] > 0)) {
          throw std::invalid_argument("loglog_slope needs positive values and x");
        }
        lx.push_back(std::log(x[i]));
        ly.push_back(std::log(values[i]));
      }
      const LineFit fit = fit_line(lx, ly);
      if (!std::isfinite(fit.slope)) {
        throw std::invalid_argument("loglog_slope needs at least 2 distinct x");
      }
      return fit.slope;
    }
    case Reduce::best_mean: {
      // x holds each row's group (pair_values numbers the `by` column's values).
      std::map<double, std::pair<double, int64_t>> groups;  // group → (sum, count)
      for (size_t i = 0; i < n; ++i) {
        auto& [sum, count] = groups[x[i]];
        sum += values[i];
        ++count;
      }
      double best = -std::numeric_limits<double>::infinity();
      for (const auto& [group, sum_count] : groups) {
        best = std::max(best, sum_count.first / static_cast<double>(sum_count.second));
      }
      return best;
    }
  }
  return mean;
}

StudyFacts study_facts(const fs::path& study_dir) {
  const fs::path file = study_dir / "experiment.json";
  if (!fs::exists(file)) {
    throw InputError(
        fmt::format("{}: no such file (needed for \"beyond_training\", \"within_training\", "
                    "\"last_step\" and \"decay_start\")",
                    file.string()));
  }
  try {
    const nlohmann::json train = nlohmann::json::parse(read_file(file)).at("train");
    StudyFacts f;
    f.max_train_length = train.at("max_len").get<int64_t>();
    f.last_step = train.value("steps", int64_t{-1});
    if (train.value("schedule", std::string()) == "wsd") {
      f.decay_start = wsd_decay_start(f.last_step, train.at("warmup").get<int64_t>(),
                                      train.at("decay_fraction").get<double>());
    }
    return f;
  } catch (const nlohmann::json::exception&) {
    throw InputError(
        fmt::format("{}: no usable train section (max_len, steps, warmup, schedule "
                    "or decay_fraction is missing or of the wrong type)",
                    file.string()));
  }
}

std::vector<PairValue> pair_values(const Claim& c, const CsvTable& table,
                                   std::optional<StudyFacts> facts,
                                   std::vector<std::string>* dropped) {
  if (needs_study_facts(c) && !facts) {
    throw InputError(fmt::format("claim '{}': a filter needs the study's training settings", c.id));
  }
  const size_t pair_column = table.column(c.pair_by);
  // Per term: pair → (values, x) of the matching rows.
  using Rows = std::pair<std::vector<double>, std::vector<double>>;
  std::vector<std::map<std::string, Rows>> per_term(c.terms.size());
  std::vector<std::string> pairs;
  for (size_t t = 0; t < c.terms.size(); ++t) {
    const Term& term = c.terms[t];
    std::vector<std::pair<size_t, const FilterValue*>> conditions;
    for (const auto& [column, f] : term.filter) conditions.emplace_back(table.column(column), &f);
    const size_t value_column = table.column(term.value);
    const size_t x_column = term.x.empty() ? value_column : table.column(term.x);
    // best_mean: each distinct value of the `by` column numbered, the number passed as x.
    const std::optional<size_t> by_column =
        term.by.empty() ? std::nullopt : std::optional<size_t>(table.column(term.by));
    std::map<std::string, double> group_ids;
    for (const std::vector<std::string>& row : table.rows) {
      const bool all = std::all_of(conditions.begin(), conditions.end(), [&](const auto& cond) {
        return filter_matches(*cond.second, row[cond.first], facts);
      });
      if (!all) continue;
      const auto value = cell_number(row[value_column]);
      const auto x =
          by_column
              ? std::optional<double>(
                    group_ids.try_emplace(row[*by_column], double(group_ids.size())).first->second)
              : cell_number(row[x_column]);
      if (!value || !x) {
        throw InputError(
            fmt::format("{}: claim '{}': a row matching {} has '{}' in column '{}', "
                        "not a number",
                        table.file.string(), c.id, term.description,
                        value ? row[x_column] : row[value_column], value ? term.x : term.value));
      }
      Rows& rows = per_term[t][row[pair_column]];
      rows.first.push_back(*value);
      rows.second.push_back(*x);
      if (std::find(pairs.begin(), pairs.end(), row[pair_column]) == pairs.end()) {
        pairs.push_back(row[pair_column]);
      }
    }
    if (per_term[t].empty() && !c.drop_incomplete_pairs) {
      throw InputError(fmt::format("{}: claim '{}': term {} matches no rows", table.file.string(),
                                   c.id, term.description));
    }
  }
  sort_pairs(pairs);
  std::vector<PairValue> out;
  for (const std::string& pair : pairs) {
    double sum = 0;
    bool complete = true;
    for (size_t t = 0; t < c.terms.size(); ++t) {
      const Term& term = c.terms[t];
      const auto it = per_term[t].find(pair);
      if (it == per_term[t].end() && c.drop_incomplete_pairs) {
        if (dropped != nullptr) dropped->push_back(pair);
        complete = false;
        break;
      }
      if (it == per_term[t].end()) {
        throw InputError(fmt::format("{}: claim '{}': term {} matches no rows for {} = {}",
                                     table.file.string(), c.id, term.description, c.pair_by, pair));
      }
      try {
        sum += term.weight * reduce_values(term.reduce, it->second.first, it->second.second);
      } catch (const std::invalid_argument& e) {
        throw InputError(fmt::format("{}: claim '{}': term {} for {} = {}: {}", table.file.string(),
                                     c.id, term.description, c.pair_by, pair, e.what()));
      }
    }
    if (complete) out.push_back({pair, sum});
  }
  return out;
}

ClaimEvaluation evaluate_claim(const Claim& c, const fs::path& study_dir, bool decided_by_pilot) {
  const CsvTable table = read_csv_table(study_dir / c.source);
  std::optional<StudyFacts> facts;
  if (needs_study_facts(c)) facts = study_facts(study_dir);
  for (const Term& t : c.terms) {
    for (const auto& [column, f] : t.filter) {
      if (f.kind == FilterValue::Kind::decay_start && facts->decay_start < 0) {
        throw InputError(
            fmt::format("claim '{}': filter \"decay_start\" needs a study trained "
                        "with schedule = \"wsd\"",
                        c.id));
      }
      if ((f.kind == FilterValue::Kind::last_step || f.kind == FilterValue::Kind::second_half) &&
          facts->last_step < 0) {
        throw InputError(fmt::format("claim '{}': filter \"{}\" needs train.steps in {}", c.id,
                                     f.text, (study_dir / "experiment.json").string()));
      }
    }
  }
  ClaimEvaluation e;
  std::optional<Verdict> untestable;
  if (informativeness_applies(c)) {
    e.informativeness = read_json_file(study_dir / "experiment.json", [&](const nlohmann::json& j) {
      return check_informativeness(c, table, *facts, j);
    });
    untestable = e.informativeness.untestable();
  }
  // A study decided by its pilot (D6) has the baseline arm alone: an untestable claim then
  // has no pairs to show.
  if (!untestable || !decided_by_pilot) {
    e.pairs = pair_values(c, table, facts, &e.dropped);
    std::vector<double> values;
    for (const PairValue& p : e.pairs) values.push_back(p.value);
    if (c.share) {
      try {
        e.statistic = share_statistic(values);
      } catch (const std::invalid_argument& x) {
        throw InputError(fmt::format("{}: claim '{}' (share = true): {}",
                                     (study_dir / c.source).string(), c.id, x.what()));
      }
    } else {
      e.statistic = pair_statistic(values);
    }
    if (c.deterministic && !values.empty()) {
      // No sampling noise: the values themselves bound the effect.
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      e.statistic.low = *lo;
      e.statistic.high = *hi;
    }
  }
  e.decision = untestable ? Decision{*untestable, e.informativeness.summary()}
                          : decide(c.expect, e.statistic, c.min_pairs);
  if (!e.dropped.empty()) {
    e.decision.reason +=
        fmt::format("; left out, a term having no rows for them (e.g. a run that diverged): {} {}",
                    c.pair_by, fmt::join(e.dropped, ", "));
  }
  return e;
}

}  // namespace normlab::claims
