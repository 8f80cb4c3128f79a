#include "normlab/particles/study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "at_a_time.hpp"
#include "finished_run.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/progress.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/particles/config.hpp"
#include "normlab/particles/fits.hpp"
#include "normlab/particles/radius_fit.hpp"
#include "normlab/particles/scalar_reduction.hpp"
#include "normlab/particles/simulation.hpp"
#include "normlab/particles/speed_law.hpp"
#include "normlab/particles/summary_table.hpp"
#include "normlab/report/html_report.hpp"
#include "normlab/report/plot.hpp"

namespace normlab::particles {

namespace {

using Clock = std::chrono::steady_clock;

struct RunSpec {
  std::string label;  // the run's name in the file
  std::string name;   // label, or label_seedS when the run has several seeds (file stem)
  ParticlesConfig config;
  FitOptions fit;
};

struct RunResult {
  RunSpec spec;
  Trajectory trajectory;
  DecayFit fit;
  RadiusFit radius;             // mean_radius − r0 ≈ C t^p over the fit window
  double seconds = 0;           // wall time of the run, observers included
  bool has_prediction = false;  // closed-form initial velocity applies
  double predicted_velocity = 0;
  double scalar_max_diff = -1;  // max |Δ mean_cos| against the scalar reduction; −1: n/a
  double scalar_max_rel_diff_tail = -1;  // max relative Δ(1 − mean_cos) over the fit window
  double early_angle = 0;                // mean angle moved by t = early_t (radians)
};

// Reads the fit keys of a section into `fit` (absent keys keep their value).
void read_fit_keys(TomlSection& s, FitOptions& fit) {
  fit.t_from = s.get_double("fit_from", fit.t_from);
  fit.t_to = s.get_double("fit_to", fit.t_to);
  fit.floor = s.get_double("fit_floor", fit.floor);
}

// `seeds = [..]`: the run once per seed (overrides `seed`). Empty: the one `seed`.
std::vector<int64_t> read_seeds(TomlSection& s, const std::vector<int64_t>& current) {
  std::vector<int64_t> seeds = s.get_int_list("seeds", current);
  for (size_t i = 0; i < seeds.size(); ++i) {
    if (seeds[i] < 0) {
      throw UsageError(
          fmt::format("{}key 'seeds' must list integers >= 0, got {}", s.where("seeds"), seeds[i]));
    }
    for (size_t j = 0; j < i; ++j) {
      if (seeds[j] == seeds[i]) {
        throw UsageError(fmt::format("{}key 'seeds' lists {} twice", s.where("seeds"), seeds[i]));
      }
    }
  }
  if (s.has("seeds") && seeds.empty()) {
    throw UsageError(fmt::format("{}key 'seeds' must list at least one seed", s.where("seeds")));
  }
  return seeds;
}

std::vector<RunSpec> read_runs(TomlSection& top) {
  ParticlesConfig base;
  FitOptions base_fit;
  base_fit.t_from = -1;  // −1: default to the second half of the run
  base_fit.t_to = -1;
  base_fit.floor = 1e-20;
  TomlSection defaults = top.section("defaults");
  read_config_keys(defaults, base);
  read_fit_keys(defaults, base_fit);
  const std::vector<int64_t> base_seeds = read_seeds(defaults, {});
  defaults.finish();

  const std::vector<std::string> labels = top.get_string_list("runs", {});
  if (labels.empty()) {
    throw UsageError(
        fmt::format("{}key 'runs' must list the runs, e.g. runs = [\"post\", \"pre\"] "
                    "with a table [run.post] for each",
                    top.where("runs")));
  }
  TomlSection run_tables = top.section("run");
  std::vector<RunSpec> runs;
  for (const std::string& label : labels) {
    for (const RunSpec& earlier : runs) {
      if (earlier.label == label) {
        throw UsageError(fmt::format("{}run '{}' is listed twice", top.where("runs"), label));
      }
    }
    RunSpec spec{label, label, base, base_fit};
    // A run named after a scheme uses that scheme unless its table says otherwise.
    for (const std::string& name : speed_law_names()) {
      if (name == label) spec.config.scheme = parse_speed_law(label);
    }
    TomlSection table = run_tables.section(label);
    read_config_keys(table, spec.config);
    read_fit_keys(table, spec.fit);
    std::vector<int64_t> seeds = read_seeds(table, base_seeds);
    table.finish();
    try {
      validate(spec.config);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}run '{}': {}", top.where("runs"), label, e.what()));
    }
    if (spec.fit.t_from < 0) spec.fit.t_from = spec.config.t_end / 2;
    if (spec.fit.t_to < 0) spec.fit.t_to = spec.config.t_end;
    if (seeds.empty()) seeds.push_back(static_cast<int64_t>(spec.config.seed));
    for (int64_t seed : seeds) {
      RunSpec one = spec;
      one.config.seed = static_cast<uint64_t>(seed);
      if (seeds.size() > 1) one.name = fmt::format("{}_seed{}", label, seed);
      runs.push_back(one);
    }
  }
  run_tables.finish();
  return runs;
}

// A study file's top-level settings and its runs.
struct StudySettings {
  std::string title;
  int64_t jobs = 1;  // the file's runs at a time
  bool scalar_check = true;
  double early_t = 1.0;
  std::vector<RunSpec> runs;
};

// Reads the rest of a study file (the caller has read `kind`) and rejects unknown keys.
StudySettings read_study(TomlSection& top) {
  StudySettings study;
  study.title = top.get_string("title", "");
  study.jobs = top.get_int("jobs", 1, {1, 256});
  study.scalar_check = top.get_bool("scalar_check", true);
  study.early_t = top.get_double("early_t", 1.0);
  if (!(study.early_t > 0)) {
    throw UsageError(
        fmt::format("{}key 'early_t' must be > 0, got {}", top.where("early_t"), study.early_t));
  }
  study.runs = read_runs(top);
  top.finish();
  return study;
}

std::string num(double x, int digits = 4) {
  if (std::isnan(x)) return "n/a";
  return fmt::format("{:.{}g}", x, digits);
}

// Integrates the run `r.spec` (and its scalar reduction when `scalar_check` and one exists),
// filling r.trajectory, r.seconds and the scalar comparison; progress every 10 s on stderr.
void integrate_run(RunResult& r, double early_t, bool scalar_check, size_t index, size_t count) {
  const RunSpec& spec = r.spec;
  const auto start = Clock::now();
  auto last_report = start;
  std::fprintf(stderr, "[%zu/%zu] %s: n %d, d %d, t_end %g, %s ...\n", index + 1, count,
               spec.name.c_str(), spec.config.n, spec.config.d, spec.config.t_end,
               to_string(spec.config.integrator).c_str());
  const std::vector<double> extra{early_t};
  r.trajectory = simulate(
      spec.config,
      [&](const Observation& o) {
        const auto now = Clock::now();
        if (std::chrono::duration<double>(now - last_report).count() >= 10.0) {
          // ETA: the time so far scaled to the rest of [0, t_end] (steps adapt, so a guess).
          const double elapsed = std::chrono::duration<double>(now - start).count();
          const double eta = o.t > 0 ? elapsed * (spec.config.t_end - o.t) / o.t : NAN;
          std::fprintf(stderr, "[%zu/%zu] %s: t = %g of %g (%.0f s, ETA %s)\n", index + 1, count,
                       spec.name.c_str(), o.t, spec.config.t_end, elapsed,
                       format_duration(eta).c_str());
          last_report = now;
        }
      },
      extra);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!scalar_check || !has_scalar_reduction(spec.config)) return;
  const Trajectory scalar = simulate_scalar(spec.config, {}, extra);
  r.scalar_max_diff = 0;
  r.scalar_max_rel_diff_tail = 0;
  for (size_t k = 0; k < scalar.rows.size() && k < r.trajectory.rows.size(); ++k) {
    const Observation& a = r.trajectory.rows[k];
    const Observation& b = scalar.rows[k];
    r.scalar_max_diff = std::max(r.scalar_max_diff, std::abs(a.mean_cos - b.mean_cos));
    if (a.t >= spec.fit.t_from && a.t <= spec.fit.t_to && b.one_minus_mean_cos >= spec.fit.floor) {
      r.scalar_max_rel_diff_tail =
          std::max(r.scalar_max_rel_diff_tail,
                   std::abs(a.one_minus_mean_cos - b.one_minus_mean_cos) / b.one_minus_mean_cos);
    }
  }
}

// Whether the positive values of t span more than two decades.
bool spans_decades(const std::vector<double>& t) {
  double lo = INFINITY, hi = 0;
  for (double x : t) {
    if (x > 0) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  }
  return hi > 0 && hi / lo > 100;
}

void write_plots(const std::vector<RunResult>& results, const std::filesystem::path& dir,
                 const std::string& title) {
  // The time axis of mean cos and 1 − mean cos is logarithmic when t spans more than two
  // decades (the t = 0 rows then drop out of those plots only).
  std::vector<double> times;
  for (const RunResult& r : results) {
    for (const Observation& o : r.trajectory.rows) times.push_back(o.t);
  }
  const bool log_t = spans_decades(times);
  auto plot = [&](const std::string& file, const std::string& what, const std::string& y_label,
                  bool log_x, bool log_y, auto value) {
    PlotSpec spec;
    spec.title = title.empty() ? what : what + "\n" + title;
    spec.x_label = "t (depth)";
    spec.y_label = y_label;
    spec.log_x = log_x;
    spec.log_y = log_y;
    for (const RunResult& r : results) {
      PlotSeries series{r.spec.name, {}, {}};
      for (const Observation& o : r.trajectory.rows) {
        series.x.push_back(o.t);
        series.y.push_back(value(o));
      }
      spec.series.push_back(std::move(series));
    }
    write_line_plot(dir / file, spec);
  };
  plot("mean_cos.png", log_t ? "mean pairwise cosine (log t)" : "mean pairwise cosine", "mean cos",
       log_t, false, [](const Observation& o) { return o.mean_cos; });
  plot("one_minus_mean_cos.png",
       log_t ? "1 - mean cosine (log-log)" : "1 - mean cosine (log scale)", "1 - mean cos", log_t,
       true, [](const Observation& o) { return o.one_minus_mean_cos; });
  plot("velocity.png", "d(mean cos)/dt (log-log)", "d mean cos / dt", true, true,
       [](const Observation& o) { return o.dcos_dt; });
  plot("speed.png", "mean angular speed", "mean |d theta/dt|", true, true,
       [](const Observation& o) { return o.mean_speed; });
  plot("radius.png", "mean radius", "mean r", true, true,
       [](const Observation& o) { return o.mean_radius; });
}

nlohmann::json result_json(const RunResult& r, const std::string& key, double early_t) {
  const ParticlesConfig& c = r.spec.config;
  const TerminalPrediction p = predicted_terminal(c);
  const Observation& first = r.trajectory.rows.front();
  const Observation& last = r.trajectory.rows.back();
  auto number = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); };
  nlohmann::json j;
  j["label"] = r.spec.label;
  j["name"] = r.spec.name;
  j["seed"] = c.seed;
  j["qkv_depth"] = to_string(resolved_qkv_depth(c));
  j["config"] = describe(c);
  j["key"] = key;  // finished_run_key: what the run depends on (summary_holds_runs)
  j["scheme"] = to_string(c.scheme);
  j["initial_velocity"] = first.dcos_dt;
  j["predicted_initial_velocity"] = r.has_prediction ? number(r.predicted_velocity) : nullptr;
  j["initial_mean_speed"] = first.mean_speed;
  j["early_t"] = early_t;
  j["mean_angle_moved_by_early_t"] = r.early_angle;
  j["final"] = {{"t", last.t},
                {"mean_cos", last.mean_cos},
                {"one_minus_mean_cos", last.one_minus_mean_cos},
                {"min_cos", last.min_cos},
                {"mean_radius", last.mean_radius},
                {"mean_speed", last.mean_speed}};
  j["fit"] = {{"points", r.fit.points},
              {"t_from", number(r.fit.t_from)},
              {"t_to", number(r.fit.t_to)},
              {"floor", r.spec.fit.floor},
              {"exponential_rate", number(r.fit.exp_rate)},
              {"exponential_rss", number(r.fit.exp_rss)},
              {"power_exponent", number(r.fit.power_exponent)},
              {"power_rss", number(r.fit.power_rss)},
              {"stretched_kappa", number(r.fit.stretched_rate)},
              {"stretched_rss", number(r.fit.stretched_rss)},
              {"better", r.fit.better}};
  j["radius_fit"] = {{"points", r.radius.points},         {"t_from", number(r.radius.t_from)},
                     {"t_to", number(r.radius.t_to)},     {"exponent", number(r.radius.exponent)},
                     {"ci_low", number(r.radius.ci_low)}, {"ci_high", number(r.radius.ci_high)},
                     {"r2", number(r.radius.r2)}};
  j["predicted_terminal"] = {{"law", p.law}, {"kind", p.kind}, {"value", p.value}};
  j["scalar_reduction_max_abs_diff_mean_cos"] =
      r.scalar_max_diff >= 0 ? nlohmann::json(r.scalar_max_diff) : nlohmann::json();
  j["scalar_reduction_max_rel_diff_tail"] = r.scalar_max_rel_diff_tail >= 0
                                                ? nlohmann::json(r.scalar_max_rel_diff_tail)
                                                : nlohmann::json();
  j["integration"] = {{"integrator", to_string(c.integrator)},
                      {"steps", r.trajectory.stats.steps},
                      {"rejected", r.trajectory.stats.rejected},
                      {"rhs_evals", r.trajectory.stats.rhs_evals},
                      {"seconds_integrating", r.trajectory.stats.seconds},
                      {"seconds_total", r.seconds}};
  return j;
}

std::string summary_csv(const std::vector<RunResult>& results) {
  std::string out =
      "label,scheme,initial_velocity,predicted_initial_velocity,initial_mean_speed,"
      "mean_angle_moved_by_early_t,t_end,"
      "final_one_minus_mean_cos,final_mean_radius,fit_points,fit_t_from,fit_t_to,exp_rate,"
      "exp_rss,power_exponent,power_rss,stretched_kappa,stretched_rss,better_fit,"
      "predicted_terminal,scalar_max_abs_diff,steps,seconds,radius_exponent,radius_ci_low,"
      "radius_ci_high\n";
  for (const RunResult& r : results) {
    const Observation& first = r.trajectory.rows.front();
    const Observation& last = r.trajectory.rows.back();
    out += fmt::format(
        "{},{},{:.10g},{},{:.6g},{:.6g},{:g},{:.6g},{:.6g},{},{:g},{:g},{:.6g},{:.3g},{:.6g},{:.3g}"
        ","
        "{:.6g},{:.3g},{},\"{}\",{},{},{:.2f},{:.6g},{:.6g},{:.6g}\n",
        r.spec.name, to_string(r.spec.config.scheme), first.dcos_dt,
        r.has_prediction ? fmt::format("{:.10g}", r.predicted_velocity) : "", first.mean_speed,
        r.early_angle, last.t, last.one_minus_mean_cos, last.mean_radius, r.fit.points,
        r.fit.t_from, r.fit.t_to, r.fit.exp_rate, r.fit.exp_rss, r.fit.power_exponent,
        r.fit.power_rss, r.fit.stretched_rate, r.fit.stretched_rss, r.fit.better,
        predicted_terminal(r.spec.config).law,
        r.scalar_max_diff >= 0 ? fmt::format("{:.3g}", r.scalar_max_diff) : "",
        r.trajectory.stats.steps, r.seconds, r.radius.exponent, r.radius.ci_low, r.radius.ci_high);
  }
  return out;
}

void print_table(const std::vector<RunResult>& results, double early_t) {
  std::printf("\n%-15s %-13s %-13s %-9s %-9s %-9s %-9s %-12s %-24s\n", "run", "init. veloc.",
              "predicted", "rel.diff", "exp rate", "power p", "kappa", "better fit",
              "predicted terminal");
  for (const RunResult& r : results) {
    const double v0 = r.trajectory.rows.front().dcos_dt;
    const std::string predicted = r.has_prediction ? num(r.predicted_velocity, 6) : "-";
    const std::string rel =
        r.has_prediction
            ? fmt::format("{:.1e}", std::abs(v0 - r.predicted_velocity) / r.predicted_velocity)
            : "-";
    std::printf("%-15s %-13s %-13s %-9s %-9s %-9s %-9s %-12s %-24s\n", r.spec.name.c_str(),
                num(v0, 6).c_str(), predicted.c_str(), rel.c_str(), num(r.fit.exp_rate).c_str(),
                num(r.fit.power_exponent).c_str(), num(r.fit.stretched_rate).c_str(),
                r.fit.better.c_str(), predicted_terminal(r.spec.config).law.c_str());
  }
  const std::string angle_header = fmt::format("angle@t={:g}", early_t);
  std::printf("\n%-15s %-11s %-12s %-11s %-22s %-9s %-24s %-9s %-8s\n", "run", "init.speed",
              angle_header.c_str(), "t_end", "1-mean cos at t_end", "radius",
              "radius p [95% interval]", "steps", "seconds");
  for (const RunResult& r : results) {
    const Observation& first = r.trajectory.rows.front();
    const Observation& last = r.trajectory.rows.back();
    const std::string radius_p =
        r.radius.points >= 3 ? fmt::format("{} [{}, {}]", num(r.radius.exponent, 3),
                                           num(r.radius.ci_low, 3), num(r.radius.ci_high, 3))
                             : "-";
    std::printf("%-15s %-11s %-12s %-11s %-22s %-9s %-24s %-9lld %-8.1f\n", r.spec.name.c_str(),
                num(first.mean_speed).c_str(), num(r.early_angle).c_str(), num(last.t).c_str(),
                num(last.one_minus_mean_cos, 4).c_str(), num(last.mean_radius).c_str(),
                radius_p.c_str(), static_cast<long long>(r.trajectory.stats.steps), r.seconds);
  }
  bool any_scalar = false;
  for (const RunResult& r : results) any_scalar |= r.scalar_max_diff >= 0;
  if (any_scalar) {
    std::printf("\nscalar reduction check (n-particle vs scalar ODE):\n");
    for (const RunResult& r : results) {
      if (r.scalar_max_diff < 0) continue;
      std::printf(
          "  %-15s max |delta mean cos| %.2e; max relative delta(1 - mean cos) over the fit "
          "window %.2e\n",
          r.spec.name.c_str(), r.scalar_max_diff, r.scalar_max_rel_diff_tail);
    }
  }
}

}  // namespace

std::vector<RunKey> study_run_keys(TomlSection& top) {
  const StudySettings study = read_study(top);
  std::vector<RunKey> keys;
  for (const RunSpec& spec : study.runs) {
    keys.push_back(
        {spec.name, finished_run_key(spec.config, spec.fit, study.early_t, study.scalar_check)});
  }
  return keys;
}

bool summary_holds_runs(const nlohmann::json& summary, const std::vector<RunKey>& keys) {
  if (!summary.is_object() || !summary.contains("runs") || !summary.at("runs").is_array()) {
    return false;
  }
  const nlohmann::json& runs = summary.at("runs");
  if (runs.size() != keys.size()) return false;
  for (size_t i = 0; i < keys.size(); ++i) {
    const nlohmann::json& run = runs[i];
    if (!run.is_object() || run.value("name", "") != keys[i].name ||
        run.value("key", "") != keys[i].key) {
      return false;
    }
  }
  return true;
}

void run_study(TomlSection& top, const std::filesystem::path& out_dir, int jobs) {
  const StudySettings study = read_study(top);
  const std::string& title = study.title;
  if (jobs <= 0) jobs = static_cast<int>(study.jobs);
  const bool scalar_check = study.scalar_check;
  const double early_t = study.early_t;
  const std::vector<RunSpec>& runs = study.runs;

  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create: {}", out_dir.string(), ec.message()));
  if (!title.empty()) std::printf("%s\n", title.c_str());
  std::printf("results folder: %s\n", out_dir.string().c_str());

  // Finished runs are reused; the others are integrated, `jobs` at a time, each on its own
  // thread (the runs share nothing, so each gives the same numbers at any `jobs`).
  std::vector<RunResult> results(runs.size());
  std::vector<size_t> todo;       // indices into `runs` still to integrate
  std::vector<std::string> keys;  // each run's settings, as its record keeps them
  const auto study_start = Clock::now();
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunSpec& spec = runs[i];
    RunResult& r = results[i];
    r.spec = spec;
    const std::string& key =
        keys.emplace_back(finished_run_key(spec.config, spec.fit, early_t, scalar_check));
    const std::filesystem::path record = out_dir / "runs" / (spec.name + ".json");
    std::string why_not;
    if (std::optional<FinishedRun> kept = load_finished_run(record, key, why_not)) {
      r.trajectory = std::move(kept->trajectory);
      r.seconds = kept->seconds;
      r.scalar_max_diff = kept->scalar_max_diff;
      r.scalar_max_rel_diff_tail = kept->scalar_max_rel_diff_tail;
      std::fprintf(stderr, "[%zu/%zu] %s: finished earlier (%.1f s), reused from %s\n", i + 1,
                   runs.size(), spec.name.c_str(), r.seconds, record.string().c_str());
      continue;
    }
    if (!why_not.empty()) {
      std::fprintf(stderr, "[%zu/%zu] %s: not reusing %s: %s\n", i + 1, runs.size(),
                   spec.name.c_str(), record.string().c_str(), why_not.c_str());
    }
    todo.push_back(i);
  }
  const int workers = static_cast<int>(std::min<size_t>(todo.size(), static_cast<size_t>(jobs)));
  if (workers > 1) {
    std::fprintf(stderr, "%zu run(s) to integrate, %d at a time\n", todo.size(), workers);
  }
  for_each_at_a_time(todo, workers, [&](size_t i) {
    RunResult& r = results[i];
    const RunSpec& spec = r.spec;
    integrate_run(r, early_t, scalar_check, i, runs.size());
    save_finished_run(out_dir / "runs" / (spec.name + ".json"), keys[i],
                      {r.trajectory, r.seconds, r.scalar_max_diff, r.scalar_max_rel_diff_tail});
    write_file_atomic(out_dir / (spec.name + ".csv"), observations_csv(r.trajectory.rows));
    std::fprintf(stderr, "[%zu/%zu] %s: done in %.1f s (%lld steps)\n", i + 1, runs.size(),
                 spec.name.c_str(), r.seconds, static_cast<long long>(r.trajectory.stats.steps));
  });
  for (RunResult& r : results) {
    const RunSpec& spec = r.spec;
    for (const Observation& o : r.trajectory.rows) {
      if (o.t <= early_t) r.early_angle = o.mean_angle_from_start;
    }
    r.fit = fit_terminal_decay(r.trajectory.rows, spec.fit);
    r.radius = fit_radius_growth(r.trajectory.rows, spec.config.r0, spec.fit.t_from, spec.fit.t_to);
    if (has_scalar_reduction(spec.config)) {
      r.has_prediction = true;
      r.predicted_velocity = predicted_initial_velocity(spec.config);
    }
  }

  nlohmann::json summary;
  summary["title"] = title;
  summary["file"] = top.file();
  summary["runs"] = nlohmann::json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    summary["runs"].push_back(result_json(results[i], keys[i], early_t));
  }
  summary["seconds"] = std::chrono::duration<double>(Clock::now() - study_start).count();
  write_file_atomic(out_dir / "summary.json", summary.dump(2) + "\n");
  write_file_atomic(out_dir / "summary.csv", summary_csv(results));
  std::vector<SummaryRow> rows;
  for (const RunResult& r : results) {
    const Observation& first = r.trajectory.rows.front();
    const Observation& last = r.trajectory.rows.back();
    rows.push_back({r.spec.name, r.spec.label, r.spec.config, first.dcos_dt, first.mean_speed,
                    early_t, r.early_angle, r.fit, r.radius, last.mean_radius,
                    last.one_minus_mean_cos});
  }
  write_file_atomic(out_dir / "particles_summary.csv", summary_rows_csv(rows));
  write_plots(results, out_dir, title);
  print_table(results, early_t);
  std::printf(
      "\ntotal %.1f s; wrote %s/{particles_summary.csv,summary.csv,summary.json,<run>.csv,*.png}\n",
      summary["seconds"].get<double>(), out_dir.string().c_str());
  std::printf("%s\n", report_line_after_run(out_dir).c_str());
}

}  // namespace normlab::particles
