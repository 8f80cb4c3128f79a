// `normlab particles`: simulates the normalized-attention particle dynamics (docs/particles.md)
// for one scheme and prints or writes the recorded observables (docs/particles.md).
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/particles/config.hpp"
#include "normlab/particles/fits.hpp"
#include "normlab/particles/radius_fit.hpp"
#include "normlab/particles/scalar_reduction.hpp"
#include "normlab/particles/simulation.hpp"
#include "normlab/particles/speed_law.hpp"
#include "normlab/report/plot.hpp"
#include "particles_bridge.hpp"
#include "validators.hpp"

namespace normlab::cli {

namespace {

struct ParticlesOptions {
  std::string scheme, init, qkv = "identity", qkv_depth = "auto", integrator = "rk4";
  particles::ParticlesConfig config;
  int64_t seed = 0;
  bool summary = false;
  bool scalar = false;
  std::string csv, plot;
  double fit_from = -1, fit_to = -1, fit_floor = 1e-20;
  ParticlesBridgeOptions bridge;  // --from-checkpoint and its inputs
};

std::string plain_number(double x) {
  return fmt::format("{:.6g}", x);
}

void print_summary(const particles::ParticlesConfig& c, const particles::Trajectory& tr,
                   const ParticlesOptions& o) {
  using namespace particles;
  const SpeedLawRow& law = speed_law_row(c.scheme);
  std::printf(
      "particles: scheme %s, init %s, n %d, d %d, beta %s, qkv %s%s, heads %d, %s%s%s\n",
      to_string(c.scheme).c_str(), to_string(c.init).c_str(), c.n, c.d,
      plain_number(c.beta).c_str(), to_string(c.qkv).c_str(),
      c.qkv == QkvKind::identity ? ""
                                 : fmt::format(" ({})", to_string(resolved_qkv_depth(c))).c_str(),
      c.heads, o.scalar ? "scalar reduction" : "n particles",
      law.parameter != nullptr
          ? fmt::format(", {} {}", law.parameter_key, plain_number(c.*law.parameter)).c_str()
          : "",
      c.causal ? ", causal" : "");
  const Observation& first = tr.rows.front();
  const Observation& last = tr.rows.back();
  std::printf("initial velocity: %.10g\n", first.dcos_dt);
  if (has_scalar_reduction(c)) {
    const double predicted = predicted_initial_velocity(c);
    std::printf(
        "predicted initial velocity (closed form, docs/particles.md): %.10g  (relative "
        "difference %.2e)\n",
        predicted, std::abs(first.dcos_dt - predicted) / predicted);
  }
  std::printf("initial mean angular speed: %.6g\n", first.mean_speed);
  std::printf("at t = %s: mean cos %.12g, 1 - mean cos %.6g, min cos %.6g, mean radius %.6g\n",
              plain_number(last.t).c_str(), last.mean_cos, last.one_minus_mean_cos, last.min_cos,
              last.mean_radius);
  FitOptions fo;
  fo.t_from = o.fit_from >= 0 ? o.fit_from : c.t_end / 2;
  fo.t_to = o.fit_to >= 0 ? o.fit_to : c.t_end;
  fo.floor = o.fit_floor;
  const DecayFit fit = fit_terminal_decay(tr.rows, fo);
  if (fit.points < 3) {
    std::printf(
        "terminal fit: not enough rows (%d) with t in [%s, %s], dcos/dt > 0 and "
        "1 - mean cos >= %g\n",
        fit.points, plain_number(fo.t_from).c_str(), plain_number(fo.t_to).c_str(), fo.floor);
  } else {
    std::printf("terminal fit of dcos/dt over %d rows, t in [%s, %s]:\n", fit.points,
                plain_number(fit.t_from).c_str(), plain_number(fit.t_to).c_str());
    std::printf("  exponential rate: %.4f  (C e^{-rate t}, rss %.3g)\n", fit.exp_rate, fit.exp_rss);
    std::printf("  power-law exponent: %.4f  (C t^{-exponent}, rss %.3g)\n", fit.power_exponent,
                fit.power_rss);
    std::printf("  stretched-exponential kappa: %.4f  (C e^{-kappa sqrt t}/sqrt t, rss %.3g)\n",
                fit.stretched_rate, fit.stretched_rss);
    std::printf("  better fit: %s\n", fit.better.c_str());
  }
  std::printf("predicted terminal law: %s%s\n", predicted_terminal(c).law.c_str(),
              per_layer_qkv(c) ? " (derived for depth-tied Q, K, V)" : "");
  if (speed_law_row(c.scheme).radial_motion) {
    const RadiusFit rf = fit_radius_growth(tr.rows, c.r0, fo.t_from, fo.t_to);
    if (rf.points < 3) {
      std::printf("radius growth fit: not enough rows (%d) with t in [%s, %s] and radius > r0\n",
                  rf.points, plain_number(fo.t_from).c_str(), plain_number(fo.t_to).c_str());
    } else {
      std::printf(
          "radius growth: mean radius - r0 = C t^p over %d rows, t in [%s, %s]: p = %.4f "
          "(95%% interval [%.4f, %.4f], r2 %.4f; qkv %s)\n",
          rf.points, plain_number(rf.t_from).c_str(), plain_number(rf.t_to).c_str(), rf.exponent,
          rf.ci_low, rf.ci_high, rf.r2, to_string(resolved_qkv_depth(c)).c_str());
    }
  }
  std::printf(
      "integration: %lld %s steps (%lld rejected), %lld evaluations, %.3f s, %.1f "
      "steps/s\n",
      static_cast<long long>(tr.stats.steps), to_string(c.integrator).c_str(),
      static_cast<long long>(tr.stats.rejected), static_cast<long long>(tr.stats.rhs_evals),
      tr.stats.seconds, tr.stats.seconds > 0 ? tr.stats.steps / tr.stats.seconds : 0.0);
}

// --from-checkpoint: the bridge to a model. The options that describe a simulation of our own
// would be ignored there, so they are refused.
void run_from_checkpoint(const ParticlesOptions& o, const CLI::App& cmd) {
  for (const char* own :
       {"--scheme",    "--init",   "--n",         "--d",      "--beta",         "--t-end",
        "--tau",       "--alpha",  "--r0",        "--delta",  "--qkv",          "--qkv-file",
        "--qkv-depth", "--heads",  "--init-file", "--causal", "--record-every", "--summary",
        "--plot",      "--scalar", "--fit-from",  "--fit-to", "--fit-floor"}) {
    if (cmd.count(own) > 0) {
      throw UsageError(fmt::format(
          "{} does not apply with --from-checkpoint (the model sets it); allowed there: "
          "--input, --task, --task-param, --batch, --seq-len, --seed, --csv, --integrator, "
          "--dt, --rtol, --atol",
          own));
    }
  }
  if (o.seed < 0) throw UsageError(fmt::format("--seed must be >= 0, got {}", o.seed));
  ParticlesBridgeOptions b = o.bridge;
  b.seed = static_cast<uint64_t>(o.seed);
  b.csv = o.csv;
  b.integrator = particles::parse_integrator(o.integrator);
  b.dt = o.config.dt;
  if (cmd.count("--rtol") > 0) b.rtol = o.config.rtol;
  if (cmd.count("--atol") > 0) b.atol = o.config.atol;
  if (!(b.dt > 0) || !(b.rtol > 0) || !(b.atol > 0)) {
    throw UsageError("--dt, --rtol and --atol must be > 0");
  }
  run_particles_bridge(b);
}

void run(const ParticlesOptions& o, const CLI::App& cmd) {
  using namespace particles;
  if (!o.bridge.checkpoint.empty()) {
    run_from_checkpoint(o, cmd);
    return;
  }
  for (const char* bridge_only : {"--input", "--task", "--task-param", "--batch", "--seq-len"}) {
    if (cmd.count(bridge_only) > 0) {
      throw UsageError(fmt::format("{} applies to --from-checkpoint only", bridge_only));
    }
  }
  if (o.scheme.empty() || o.init.empty()) {
    throw UsageError(fmt::format(
        "{} is required (or --from-checkpoint DIR); allowed schemes: {}; initializations: {}",
        o.scheme.empty() ? "--scheme" : "--init", fmt::join(speed_law_names(), ", "),
        fmt::join(init_names(), ", ")));
  }
  ParticlesConfig c = o.config;
  c.scheme = parse_speed_law(o.scheme);
  c.init = parse_init(o.init);
  c.qkv = parse_qkv(o.qkv);
  c.qkv_depth = parse_qkv_depth(o.qkv_depth);
  c.integrator = parse_integrator(o.integrator);
  if (o.seed < 0) throw UsageError(fmt::format("--seed must be >= 0, got {}", o.seed));
  c.seed = static_cast<uint64_t>(o.seed);
  validate(c);
  if (o.scalar && !has_scalar_reduction(c)) {
    throw UsageError(
        "--scalar needs --init symmetric and --qkv identity (the only setting that "
        "reduces to one scalar ODE)");
  }
  const Trajectory tr = o.scalar ? simulate_scalar(c) : simulate(c);
  if (!o.csv.empty()) write_file_atomic(o.csv, observations_csv(tr.rows));
  if (!o.plot.empty()) {
    PlotSpec spec;
    spec.title = fmt::format("{} ({} init, n={}, d={}, beta={})", to_string(c.scheme),
                             to_string(c.init), c.n, c.d, plain_number(c.beta));
    spec.x_label = "t (depth)";
    spec.y_label = "pairwise cosine";
    PlotSeries mean{"mean cos", {}, {}}, min{"min cos", {}, {}};
    for (const Observation& row : tr.rows) {
      mean.x.push_back(row.t);
      mean.y.push_back(row.mean_cos);
      min.x.push_back(row.t);
      min.y.push_back(row.min_cos);
    }
    spec.series = {mean, min};
    write_line_plot(o.plot, spec);
  }
  if (o.summary) print_summary(c, tr, o);
  if (!o.summary && o.csv.empty() && o.plot.empty()) {
    std::fputs(observations_csv(tr.rows).c_str(), stdout);
  }
}

}  // namespace

void add_particles_command(CLI::App& app) {
  auto o = std::make_shared<ParticlesOptions>();
  auto* cmd =
      app.add_subcommand("particles",
                         "Simulate tokens as particles on the sphere under a normalization scheme "
                         "(normalized-attention dynamics, docs/particles.md)");
  particles::ParticlesConfig& c = o->config;
  cmd->add_option("--scheme", o->scheme,
                  "post, pre, mix, peri, ngpt or sqrt_scaling (required unless --from-checkpoint)");
  cmd->add_option("--init", o->init,
                  "symmetric, random, cone or file (required unless --from-checkpoint)");
  cmd->add_option("--n", c.n, "number of tokens")->capture_default_str();
  cmd->add_option("--d", c.d, "dimension")->capture_default_str();
  cmd->add_option("--beta", c.beta, "inverse temperature of the softmax (> 0)")
      ->capture_default_str();
  cmd->add_option("--dt", c.dt, "step (rk4) or first trial step (dopri5)")->capture_default_str();
  cmd->add_option("--t-end", c.t_end, "final time")->capture_default_str();
  cmd->add_option("--tau", c.tau, "mix: switch time from post to pre")->capture_default_str();
  cmd->add_option("--alpha", c.alpha, "ngpt: constant alpha_t")->capture_default_str();
  cmd->add_option("--r0", c.r0, "initial radius of every token")->capture_default_str();
  cmd->add_option("--delta", c.delta, "cone: half-angle in radians")->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the initial state and random Q, K, V")
      ->check(seed_value())
      ->capture_default_str();
  cmd->add_option("--qkv", o->qkv, "identity, kaiming, gaussian or file")->capture_default_str();
  cmd->add_option("--qkv-file", c.qkv_file, "text array (heads, 3, d, d): Q, K, V per head");
  cmd->add_option("--qkv-depth", o->qkv_depth,
                  "per_layer: layer floor(t) has its own Q, K, V; tied: one for all t; auto: "
                  "per_layer for kaiming/gaussian, tied for identity/file")
      ->capture_default_str();
  cmd->add_flag("--causal", c.causal, "causal attention: token j attends to tokens k <= j");
  cmd->add_option("--heads", c.heads, "number of heads (A_j is their mean)")->capture_default_str();
  cmd->add_option("--init-file", c.init_file, "text array (n, d) of initial directions");
  cmd->add_option("--integrator", o->integrator, "rk4 or dopri5")->capture_default_str();
  cmd->add_option("--rtol", c.rtol, "dopri5 relative tolerance")->capture_default_str();
  cmd->add_option("--atol", c.atol, "dopri5 absolute tolerance")->capture_default_str();
  cmd->add_option("--record-every", c.record_every, "time between recorded rows")
      ->capture_default_str();
  cmd->add_flag("--summary", o->summary,
                "print the initial velocity, terminal fits and timing instead of the rows");
  cmd->add_option("--csv", o->csv, "write the recorded rows to this CSV file");
  cmd->add_option("--plot", o->plot, "write a PNG plot of the mean and minimum cosine");
  cmd->add_flag("--scalar", o->scalar,
                "integrate the scalar reduction (symmetric init, Q = K = V = I) instead");
  cmd->add_option("--fit-from", o->fit_from, "terminal fit window start (default t_end/2)");
  cmd->add_option("--fit-to", o->fit_to, "terminal fit window end (default t_end)");
  cmd->add_option("--fit-floor", o->fit_floor,
                  "terminal fit: ignore rows with 1 - mean cos below this")
      ->capture_default_str();
  ParticlesBridgeOptions& b = o->bridge;
  cmd->add_option("--from-checkpoint", b.checkpoint,
                  "bridge: run the ODE with this model's per-layer attention from its embeddings "
                  "and compare with the depth probe (run dir, its final/, or a checkpoint)");
  cmd->add_option("--input", b.input, "bridge inputs: random tokens or the task's (task)")
      ->capture_default_str();
  cmd->add_option("--task", b.task, "bridge, --input task: the task (default: the run's)");
  cmd->add_option("--task-param", b.task_params, "bridge: task parameter KEY=VALUE (repeatable)");
  cmd->add_option("--batch", b.batch, "bridge: sequences")->capture_default_str();
  cmd->add_option("--seq-len", b.seq_len,
                  "bridge: tokens per random sequence, or the task length of --input task")
      ->capture_default_str();
  cmd->callback([o, cmd] { run(*o, *cmd); });
}

}  // namespace normlab::cli
