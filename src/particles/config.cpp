#include "normlab/particles/config.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "normlab/base/errors.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/particles/speed_law.hpp"

namespace normlab::particles {

namespace {

template <typename Enum>
Enum parse_enum(const std::string& what, const std::string& name,
                const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  throw UsageError(fmt::format("unknown {} '{}'; allowed: {}", what, name, fmt::join(names, ", ")));
}

[[noreturn]] void bad(const std::string& message) {
  throw UsageError(message);
}

}  // namespace

// The order of each list matches its enum.
const std::vector<std::string>& speed_law_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (int k = 0; k <= static_cast<int>(SpeedLaw::sqrt_scaling); ++k) {
      out.push_back(speed_law_row(static_cast<SpeedLaw>(k)).name);
    }
    return out;
  }();
  return names;
}
const std::vector<std::string>& init_names() {
  static const std::vector<std::string> names{"symmetric", "random", "cone", "file"};
  return names;
}
const std::vector<std::string>& qkv_names() {
  static const std::vector<std::string> names{"identity", "kaiming", "gaussian", "file"};
  return names;
}
const std::vector<std::string>& integrator_names() {
  static const std::vector<std::string> names{"rk4", "dopri5"};
  return names;
}
const std::vector<std::string>& qkv_depth_names() {
  static const std::vector<std::string> names{"auto", "per_layer", "tied"};
  return names;
}

std::string to_string(SpeedLaw s) {
  return speed_law_names()[static_cast<size_t>(s)];
}
std::string to_string(InitKind k) {
  return init_names()[static_cast<size_t>(k)];
}
std::string to_string(QkvKind k) {
  return qkv_names()[static_cast<size_t>(k)];
}
std::string to_string(IntegratorKind k) {
  return integrator_names()[static_cast<size_t>(k)];
}
std::string to_string(QkvDepth k) {
  return qkv_depth_names()[static_cast<size_t>(k)];
}

SpeedLaw parse_speed_law(const std::string& name) {
  return parse_enum<SpeedLaw>("scheme", name, speed_law_names());
}
InitKind parse_init(const std::string& name) {
  return parse_enum<InitKind>("initialization", name, init_names());
}
QkvKind parse_qkv(const std::string& name) {
  return parse_enum<QkvKind>("Q/K/V source", name, qkv_names());
}
IntegratorKind parse_integrator(const std::string& name) {
  return parse_enum<IntegratorKind>("integrator", name, integrator_names());
}
QkvDepth parse_qkv_depth(const std::string& name) {
  return parse_enum<QkvDepth>("Q/K/V depth", name, qkv_depth_names());
}

QkvDepth resolved_qkv_depth(const ParticlesConfig& c) {
  if (c.qkv_depth != QkvDepth::automatic) return c.qkv_depth;
  return c.qkv == QkvKind::kaiming || c.qkv == QkvKind::gaussian ? QkvDepth::per_layer
                                                                 : QkvDepth::tied;
}

void validate(const ParticlesConfig& c) {
  // Every numeric check is written so that NaN fails it too.
  if (!(c.n >= 2)) bad(fmt::format("--n must be at least 2 (pairs of tokens), got {}", c.n));
  if (!(c.d >= 2)) bad(fmt::format("--d must be at least 2, got {}", c.d));
  if (static_cast<double>(c.n) * c.d > 2e8) {
    bad(fmt::format("--n {} --d {} needs n*d <= 2e8 values", c.n, c.d));
  }
  if (c.init == InitKind::symmetric && c.d < c.n) {
    bad(fmt::format(
        "--init symmetric needs d >= n (n orthonormal tokens in R^d), got n={} and d={}", c.n,
        c.d));
  }
  if (!(c.beta > 0) || !std::isfinite(c.beta)) {
    bad(fmt::format("--beta must be a finite number > 0, got {}", c.beta));
  }
  if (!(c.dt > 0) || !std::isfinite(c.dt)) {
    bad(fmt::format("--dt (the step) must be > 0, got {}", c.dt));
  }
  if (!(c.t_end > 0) || !std::isfinite(c.t_end)) {
    bad(fmt::format("--t-end must be > 0, got {}", c.t_end));
  }
  if (!(c.record_every > 0) || !std::isfinite(c.record_every)) {
    bad(fmt::format("--record-every must be > 0, got {}", c.record_every));
  }
  if (c.t_end / c.record_every > 1e7) {
    bad(fmt::format("--t-end {} / --record-every {} would record more than 1e7 rows", c.t_end,
                    c.record_every));
  }
  if (c.integrator == IntegratorKind::rk4 && c.t_end / c.dt > 1e9) {
    bad(fmt::format("--t-end {} / --dt {} would take more than 1e9 RK4 steps", c.t_end, c.dt));
  }
  if (!(c.tau >= 0) || !std::isfinite(c.tau)) {
    bad(fmt::format("--tau must be a finite number >= 0, got {}", c.tau));
  }
  if (!(c.alpha > 0) || !std::isfinite(c.alpha)) {
    bad(fmt::format("--alpha must be a finite number > 0, got {}", c.alpha));
  }
  if (!(c.r0 > 0) || !std::isfinite(c.r0)) {
    bad(fmt::format("--r0 must be a finite number > 0, got {}", c.r0));
  }
  if (!(c.delta > 0 && c.delta <= std::numbers::pi)) {
    bad(fmt::format("--delta (cone half-angle, radians) must be in (0, pi], got {}", c.delta));
  }
  if (!(c.heads >= 1 && c.heads <= 64)) {
    bad(fmt::format("--heads must be between 1 and 64, got {}", c.heads));
  }
  if (!(c.rtol > 0) || !(c.atol > 0)) {
    bad(fmt::format("--rtol and --atol must be > 0, got {} and {}", c.rtol, c.atol));
  }
  if (c.init == InitKind::file && c.init_file.empty()) {
    bad("--init file needs --init-file PATH");
  }
  if (c.init != InitKind::file && !c.init_file.empty()) {
    bad(fmt::format("--init-file is only used with --init file (got --init {})",
                    to_string(c.init)));
  }
  if (c.qkv == QkvKind::file && c.qkv_file.empty()) bad("--qkv file needs --qkv-file PATH");
  if (c.rope_base != 0) {
    if (!(c.rope_base > 1))
      bad(fmt::format("rope_base must be above 1 (or 0: none), got {}", c.rope_base));
    if (c.qkv == QkvKind::identity)
      bad("rope needs Q and K (qkv kaiming, gaussian or file), not identity");
    if (!(c.rope_head_dim >= 2 && c.rope_head_dim % 2 == 0 && c.d % c.rope_head_dim == 0)) {
      bad(fmt::format("rope_head_dim must be even and divide d = {}, got {}", c.d,
                      c.rope_head_dim));
    }
  }
  if (c.qkv_depth == QkvDepth::per_layer && c.qkv == QkvKind::identity) {
    bad("--qkv-depth per_layer needs --qkv kaiming, gaussian or file (identity is the same "
        "matrix in every layer); allowed with identity: auto, tied");
  }
  if (per_layer_qkv(c) && c.t_end > 1e6) {
    bad(
        fmt::format("--qkv-depth per_layer stops at every integer time: --t-end must be <= 1e6, "
                    "got {}",
                    c.t_end));
  }
  if (c.qkv != QkvKind::file && !c.qkv_file.empty()) {
    bad(fmt::format("--qkv-file is only used with --qkv file (got --qkv {})", to_string(c.qkv)));
  }
}

void read_config_keys(TomlSection& s, ParticlesConfig& c) {
  auto choice = [&](const char* key, const std::string& current,
                    const std::vector<std::string>& allowed) {
    return s.get_choice(key, current, allowed);
  };
  auto positive_int = [&](const char* key, int current) {
    const int64_t v = s.get_int(key, current);
    if (v < 1 || v > 1000000000) {
      throw UsageError(
          fmt::format("{}key '{}' must be a positive integer, got {}", s.where(key), key, v));
    }
    return static_cast<int>(v);
  };
  c.scheme = parse_speed_law(choice("scheme", to_string(c.scheme), speed_law_names()));
  c.init = parse_init(choice("init", to_string(c.init), init_names()));
  c.n = positive_int("n", c.n);
  c.d = positive_int("d", c.d);
  c.beta = s.get_double("beta", c.beta);
  c.dt = s.get_double("dt", c.dt);
  c.t_end = s.get_double("t_end", c.t_end);
  c.tau = s.get_double("tau", c.tau);
  c.alpha = s.get_double("alpha", c.alpha);
  c.r0 = s.get_double("r0", c.r0);
  c.delta = s.get_double("delta", c.delta);
  const int64_t seed = s.get_int("seed", static_cast<int64_t>(c.seed));
  if (seed < 0) {
    throw UsageError(fmt::format("{}key 'seed' must be >= 0, got {}", s.where("seed"), seed));
  }
  c.seed = static_cast<uint64_t>(seed);
  c.qkv = parse_qkv(choice("qkv", to_string(c.qkv), qkv_names()));
  c.qkv_file = s.get_string("qkv_file", c.qkv_file);
  c.qkv_depth = parse_qkv_depth(choice("qkv_depth", to_string(c.qkv_depth), qkv_depth_names()));
  c.heads = positive_int("heads", c.heads);
  c.causal = s.get_bool("causal", c.causal);
  c.init_file = s.get_string("init_file", c.init_file);
  c.integrator =
      parse_integrator(choice("integrator", to_string(c.integrator), integrator_names()));
  c.rtol = s.get_double("rtol", c.rtol);
  c.atol = s.get_double("atol", c.atol);
  c.record_every = s.get_double("record_every", c.record_every);
}

std::string describe(const ParticlesConfig& c) {
  std::string out;
  auto line = [&](const char* key, const std::string& value) {
    out += fmt::format("{} = {}\n", key, value);
  };
  line("scheme", to_string(c.scheme));
  line("init", to_string(c.init));
  line("n", std::to_string(c.n));
  line("d", std::to_string(c.d));
  line("beta", fmt::format("{}", c.beta));
  line("dt", fmt::format("{}", c.dt));
  line("t_end", fmt::format("{}", c.t_end));
  const SpeedLawRow& law = speed_law_row(c.scheme);
  if (law.parameter != nullptr) line(law.parameter_key, fmt::format("{}", c.*law.parameter));
  line("r0", fmt::format("{}", c.r0));
  if (c.init == InitKind::cone) line("delta", fmt::format("{}", c.delta));
  if (c.init == InitKind::file) line("init_file", c.init_file);
  line("seed", std::to_string(c.seed));
  line("qkv", to_string(c.qkv));
  if (c.qkv == QkvKind::file) line("qkv_file", c.qkv_file);
  line("qkv_depth", to_string(resolved_qkv_depth(c)));
  line("heads", std::to_string(c.heads));
  line("causal", c.causal ? "true" : "false");
  if (c.rope_base != 0) {
    line("rope_base", fmt::format("{}", c.rope_base));
    line("rope_head_dim", fmt::format("{}", c.rope_head_dim));
  }
  line("integrator", to_string(c.integrator));
  if (c.integrator == IntegratorKind::dopri5) {
    line("rtol", fmt::format("{}", c.rtol));
    line("atol", fmt::format("{}", c.atol));
  }
  line("record_every", fmt::format("{}", c.record_every));
  return out;
}

}  // namespace normlab::particles
