#include "normlab/claims_evaluate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "normlab/atomic_file.hpp"
#include "normlab/errors.hpp"
#include "normlab/probes/line_fit.hpp"

namespace normlab::claims {
namespace fs = std::filesystem;

namespace {

// The cell as a number, if all of it is one.
std::optional<double> number_of(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  if (end != cell.c_str() + cell.size()) return std::nullopt;
  return v;
}

bool matches(const FilterValue& f, const std::string& cell, std::optional<int64_t> max_len) {
  switch (f.kind) {
    case FilterValue::Kind::text:
      return cell == f.text;
    case FilterValue::Kind::number: {
      const auto v = number_of(cell);
      return v && *v == f.number;
    }
    case FilterValue::Kind::one_of:
      return std::any_of(f.choices.begin(), f.choices.end(),
                         [&](const FilterValue& c) { return matches(c, cell, max_len); });
    case FilterValue::Kind::beyond_training:
    case FilterValue::Kind::within_training: {
      const auto v = number_of(cell);
      if (!v) return false;
      const bool beyond = *v > static_cast<double>(*max_len);
      return beyond == (f.kind == FilterValue::Kind::beyond_training);
    }
  }
  return false;
}

bool needs_training_length(const Claim& c) {
  for (const Term& t : c.terms) {
    for (const auto& [column, f] : t.filter) {
      if (f.kind == FilterValue::Kind::beyond_training ||
          f.kind == FilterValue::Kind::within_training) {
        return true;
      }
    }
  }
  return false;
}

// Pairs sort numerically when every one is a number, else as text.
void sort_pairs(std::vector<std::string>& pairs) {
  const bool numeric = std::all_of(pairs.begin(), pairs.end(),
                                   [](const std::string& p) { return number_of(p).has_value(); });
  std::sort(pairs.begin(), pairs.end(), [&](const std::string& a, const std::string& b) {
    return numeric ? *number_of(a) < *number_of(b) : a < b;
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
  }
  return mean;
}

int64_t max_training_length(const fs::path& study_dir) {
  const fs::path file = study_dir / "experiment.json";
  if (!fs::exists(file)) {
    throw InputError(
        fmt::format("{}: no such file (needed for \"beyond_training\" / "
                    "\"within_training\")",
                    file.string()));
  }
  try {
    return nlohmann::json::parse(read_file(file)).at("train").at("max_len").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: no train.max_len ({})", file.string(), e.what()));
  }
}

std::vector<PairValue> pair_values(const Claim& c, const CsvTable& table,
                                   std::optional<int64_t> max_train_length) {
  if (needs_training_length(c) && !max_train_length) {
    throw InputError(fmt::format("claim '{}': a filter needs the training lengths", c.id));
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
    for (const std::vector<std::string>& row : table.rows) {
      const bool all = std::all_of(conditions.begin(), conditions.end(), [&](const auto& cond) {
        return matches(*cond.second, row[cond.first], max_train_length);
      });
      if (!all) continue;
      const auto value = number_of(row[value_column]), x = number_of(row[x_column]);
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
    if (per_term[t].empty()) {
      throw InputError(fmt::format("{}: claim '{}': term {} matches no rows", table.file.string(),
                                   c.id, term.description));
    }
  }
  sort_pairs(pairs);
  std::vector<PairValue> out;
  for (const std::string& pair : pairs) {
    double sum = 0;
    for (size_t t = 0; t < c.terms.size(); ++t) {
      const Term& term = c.terms[t];
      const auto it = per_term[t].find(pair);
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
    out.push_back({pair, sum});
  }
  return out;
}

ClaimEvaluation evaluate_claim(const Claim& c, const fs::path& study_dir) {
  const CsvTable table = read_csv_table(study_dir / c.source);
  std::optional<int64_t> max_len;
  if (needs_training_length(c)) max_len = max_training_length(study_dir);
  ClaimEvaluation e;
  e.pairs = pair_values(c, table, max_len);
  std::vector<double> values;
  for (const PairValue& p : e.pairs) values.push_back(p.value);
  e.statistic = pair_statistic(values);
  e.decision = decide(c.expect, e.statistic, c.min_pairs);
  return e;
}

}  // namespace normlab::claims
