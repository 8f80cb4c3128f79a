// D3's seed count from a pilot of the baseline arm (docs/claims.md, "Design rules").
#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/claims/design_rules.hpp"
#include "normlab/claims/informativeness.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/io/json_file.hpp"

namespace normlab::claims {
namespace {

// The claim reduced to its baseline arm: the terms of negative weight, sign flipped, so a
// pair's value is the baseline's own claim value.
Claim baseline_arm(const Claim& c) {
  Claim b = c;
  b.terms.clear();
  for (const Term& t : c.terms) {
    if (t.weight >= 0) continue;
    Term flipped = t;
    flipped.weight = -t.weight;
    b.terms.push_back(flipped);
  }
  if (b.terms.empty()) {
    throw InputError(fmt::format(
        "claim '{}': no term of negative weight, so no baseline arm to pilot (D3)", c.id));
  }
  return b;
}

double sample_sd(const std::vector<PairValue>& v) {
  if (v.size() < 2) return std::nan("");
  double mean = 0;
  for (const PairValue& p : v) mean += p.value;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (const PairValue& p : v) ss += (p.value - mean) * (p.value - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

// The rule of D3 that reads the kept ledger alone: at least 10 seeds where the kept interval
// is wider than its effect, else the minimum, which is also the count of a claim the kept
// ledger has no interval for (a claim added since, or one never measured).
std::string kept_interval_rule(const SeedCount& s) {
  if (!s.kept) return fmt::format("no kept interval: {}", kMinSeeds);
  return s.wide ? fmt::format("the kept interval is wider than its effect: at least {}",
                              kSeedsWhenWide)
                : fmt::format("the kept interval is not wider than its effect: {}", kMinSeeds);
}

// The pilot's rows of a study's table: its pairs (seeds) 1 to kPilotSeeds (D3), whatever else
// has run since. A pair that is not an integer is no seed of a pilot.
CsvTable pilot_rows(CsvTable table, const std::string& pair_by) {
  const size_t pair = table.column(pair_by);
  std::erase_if(table.rows, [&](const std::vector<std::string>& row) {
    const std::optional<int64_t> seed = cell_integer(row[pair]);
    return !seed || *seed < 1 || *seed > kPilotSeeds;
  });
  return table;
}

// Whether every term of `c` has rows for at least kMinSeeds pairs among the runs already in the
// folder: a claim that reads the pilot's arm alone (a grid's reference column), which no other
// arm can change.
bool reads_the_runs_there(const Claim& c, const std::filesystem::path& study_dir) {
  const std::filesystem::path csv = study_dir / c.source;
  if (!std::filesystem::exists(csv)) return false;
  const CsvTable table = read_csv_table(csv);
  return pair_values(c, table, study_facts(study_dir)).size() >= static_cast<size_t>(kMinSeeds);
}

}  // namespace

SeedCount seed_count(const Claim& c, const std::filesystem::path& study_dir,
                     const std::optional<KeptInterval>& kept) {
  SeedCount s;
  s.kept = kept.has_value();
  s.wide = s.kept && kept->wide();
  if (!informativeness_applies(c)) {
    // No D1 check (no baseline arm beyond training with a floor and ceiling: a fit, a loss, a
    // negative control's band): D3's second rule alone, which needs no pilot.
    s.sd = std::nan("");
    s.by_resolution = kMinSeeds;
    s.seeds = s.wide ? kSeedsWhenWide : kMinSeeds;
    s.rule = "no D1 check; " + kept_interval_rule(s);
    return s;
  }
  const std::filesystem::path csv = study_dir / c.source;
  if (!std::filesystem::exists(csv)) {
    throw InputError(
        fmt::format("claim '{}': no pilot in {} (no {})", c.id, study_dir.string(), c.source));
  }
  const Claim base = baseline_arm(c);
  const CsvTable table = pilot_rows(read_csv_table(csv), c.pair_by);
  const StudyFacts facts = study_facts(study_dir);
  s.baseline = pair_values(base, table, facts);
  s.sd = sample_sd(s.baseline);
  const Informativeness inf = read_json_file(
      study_dir / "experiment.json",
      [&](const nlohmann::json& j) { return check_informativeness(c, table, facts, j); });
  if (inf.untestable() && s.baseline.size() >= static_cast<size_t>(kMinSeeds)) {
    // D6: no other arm can change an untestable verdict, and more seeds of the baseline are
    // not asked for: the pilot decides.
    s.decided_by_pilot = true;
    s.seeds = static_cast<int>(s.baseline.size());
    s.by_resolution = s.seeds;
    s.rule = "decided by its pilot (D6): " + inf.summary();
    return s;
  }
  double sum = 0;
  for (const LengthCheck& l : inf.lengths) sum += kResolvedFraction * std::abs(l.ceiling - l.floor);
  if (!inf.lengths.empty()) s.delta = sum / static_cast<double>(inf.lengths.size());
  if (s.delta && std::isfinite(s.sd)) {
    s.by_resolution = seeds_to_resolve(s.sd, *s.delta, kMinSeeds, kMaxSeeds);
  } else {
    s.by_resolution = kMinSeeds;
  }
  s.seeds = std::min(kMaxSeeds, std::max(s.by_resolution, s.wide ? kSeedsWhenWide : 0));
  if (!s.delta) {
    s.rule = "no length beyond training in the pilot; " + kept_interval_rule(s);
    return s;
  }
  s.rule = fmt::format("t·√2·sd/√n ≤ δ gives {}{}{}", s.by_resolution,
                       s.by_resolution == kMaxSeeds ? " (the cap)" : "",
                       s.wide ? "; " + kept_interval_rule(s) : "");
  return s;
}

bool decided_by_pilot(const std::vector<Claim>& claims, const std::filesystem::path& study_dir) {
  if (claims.empty() || !std::filesystem::exists(study_dir / "results.csv")) return false;
  bool untestable_found = false;
  for (const Claim& c : claims) {
    try {
      if (informativeness_applies(c)) {
        if (!seed_count(c, study_dir, std::nullopt).decided_by_pilot) return false;
        untestable_found = true;
      } else if (!reads_the_runs_there(c, study_dir)) {
        return false;
      }
    } catch (const InputError&) {
      return false;
    }
  }
  return untestable_found;
}

}  // namespace normlab::claims
