#include "normlab/particles/summary_table.hpp"
#include "normlab/io/csv.hpp"

#include <fmt/format.h>

#include <cmath>

namespace normlab::particles {

namespace {

// 10 significant digits; empty for NaN and infinities.
std::string value(double x) {
  return std::isfinite(x) ? fmt::format("{:.10g}", x) : "";
}

}  // namespace

std::string summary_rows_csv(const std::vector<SummaryRow>& rows) {
  std::string out =
      "run,label,scheme,seed,qkv,qkv_depth,n,d,beta,t_end,initial_dcos_dt,initial_mean_speed,"
      "early_t,mean_angle_moved_by_early_t,fit_t_from,fit_t_to,fit_points,exp_rate,exp_rss,"
      "power_exponent,power_rss,stretched_kappa,better_fit,radius_exponent,radius_ci_low,"
      "radius_ci_high,"
      "radius_fit_points,final_mean_radius,final_one_minus_mean_cos\n";
  for (const SummaryRow& r : rows) {
    const ParticlesConfig& c = r.config;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},", r.run, csv_field(r.label),
                       to_string(c.scheme), c.seed, to_string(c.qkv),
                       to_string(resolved_qkv_depth(c)), c.n, c.d, value(c.beta), value(c.t_end));
    out += fmt::format("{},{},{},{},", value(r.initial_dcos_dt), value(r.initial_mean_speed),
                       value(r.early_t), value(r.early_angle));
    out += fmt::format("{},{},{},{},{},{},{},{},{},", value(r.fit.t_from), value(r.fit.t_to),
                       r.fit.points, value(r.fit.exp_rate), value(r.fit.exp_rss),
                       value(r.fit.power_exponent), value(r.fit.power_rss),
                       value(r.fit.stretched_rate), r.fit.better);
    out += fmt::format("{},{},{},{},{},{}\n", value(r.radius.exponent), value(r.radius.ci_low),
                       value(r.radius.ci_high), r.radius.points, value(r.final_mean_radius),
                       value(r.final_one_minus_mean_cos));
  }
  return out;
}

}  // namespace normlab::particles
