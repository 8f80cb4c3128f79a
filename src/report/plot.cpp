#include "normlab/report/plot.hpp"
#include "normlab/io/shell_quote.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "normlab/report/svg_plot.hpp"

namespace normlab {

namespace {

// A gnuplot double-quoted string literal.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

// Full path of the gnuplot executable, or "" if there is none.
std::string find_gnuplot() {
  const char* override_path = std::getenv("NORMLAB_GNUPLOT");
  const std::string name = override_path != nullptr ? override_path : "gnuplot";
  if (name.find('/') != std::string::npos) {
    return ::access(name.c_str(), X_OK) == 0 ? name : "";
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

bool keep(double x, double y, const PlotSpec& spec) {
  if (!std::isfinite(x) || !std::isfinite(y)) return false;
  if (spec.log_x && x <= 0) return false;
  if (spec.log_y && y <= 0) return false;
  return true;
}

// The range of the points kept on one axis (x: `which` 0, y: 1), padded by 3% of it per side
// (in log space on a log axis); false when there are none.
bool kept_range(const PlotSpec& spec, int which, double& lo, double& hi) {
  lo = INFINITY;
  hi = -INFINITY;
  for (const PlotSeries& series : spec.series) {
    for (size_t k = 0; k < std::min(series.x.size(), series.y.size()); ++k) {
      if (!keep(series.x[k], series.y[k], spec)) continue;
      const double v = which == 0 ? series.x[k] : series.y[k];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (lo > hi) return false;
  const bool log = which == 0 ? spec.log_x : spec.log_y;
  if (lo == hi) {
    lo = log ? lo / 2 : lo - 0.5;
    hi = log ? hi * 2 : hi + 0.5;
    return true;
  }
  if (log) {
    const double pad = 0.03 * (std::log10(hi) - std::log10(lo));
    lo = std::pow(10.0, std::log10(lo) - pad);
    hi = std::pow(10.0, std::log10(hi) + pad);
  } else {
    const double pad = 0.03 * (hi - lo);
    lo -= pad;
    hi += pad;
  }
  return true;
}

// "set xrange [lo:hi]" and "set xtics (...)" with the report's ticks (svg::axis_ticks); a
// label with an exponent is written 2e-05 (the terminal is noenhanced).
std::string explicit_tics(const std::string& axis, double lo, double hi, bool log, bool integer) {
  std::vector<std::string> tics;
  for (const svg::Tick& t : svg::axis_ticks(lo, hi, log, integer)) {
    if (!t.major) {
      tics.push_back(fmt::format("\"\" {:.10g} 1", t.value));
      continue;
    }
    std::string label = t.label;
    if (!t.exponent.empty()) {
      const size_t times = label.find("\u00d710");
      label = (times != std::string::npos ? label.substr(0, times)
                                          : label.substr(0, label.size() - 1)) +
              "e" + t.exponent;
    }
    for (size_t at; (at = label.find("\u2212")) != std::string::npos;) label.replace(at, 3, "-");
    const std::string text = label;
    tics.push_back(fmt::format("{} {:.10g}", quoted(text), t.value));
  }
  if (tics.empty()) return "";
  return fmt::format("set {0}range [{1:.10g}:{2:.10g}]\nset {0}tics ({3})\n", axis, lo, hi,
                     fmt::join(tics, ", "));
}

void warn(const std::string& message) {
  std::fprintf(stderr, "normlab: warning: %s\n", message.c_str());
}

}  // namespace

std::string gnuplot_script(const PlotSpec& spec, const std::filesystem::path& output) {
  std::string s;
  s += fmt::format("set terminal pngcairo size {},{} noenhanced\n", spec.width, spec.height);
  s += fmt::format("set output {}\n", quoted(output.string()));
  if (!spec.title.empty()) s += fmt::format("set title {}\n", quoted(spec.title));
  s += fmt::format("set xlabel {}\nset ylabel {}\n", quoted(spec.x_label), quoted(spec.y_label));
  if (spec.log_x) s += "set logscale x\n";
  if (spec.log_y) s += "set logscale y\n";
  double lo = 0, hi = 0;
  if ((spec.log_x || spec.integer_x) && kept_range(spec, 0, lo, hi)) {
    s += explicit_tics("x", lo, hi, spec.log_x, spec.integer_x && !spec.log_x);
  }
  if (spec.log_y && kept_range(spec, 1, lo, hi)) s += explicit_tics("y", lo, hi, true, false);
  s += "set grid\nset key outside right top\n";
  std::vector<std::string> plots;
  for (size_t i = 0; i < spec.series.size(); ++i) {
    const PlotSeries& series = spec.series[i];
    std::string block;
    const size_t m = std::min(series.x.size(), series.y.size());
    for (size_t k = 0; k < m; ++k) {
      if (keep(series.x[k], series.y[k], spec)) {
        block += fmt::format("{:.10g} {:.10g}\n", series.x[k], series.y[k]);
      }
    }
    if (block.empty()) continue;
    s += fmt::format("$data{} << EOD\n{}EOD\n", i, block);
    plots.push_back(
        fmt::format("$data{} using 1:2 with lines lw 2 title {}", i, quoted(series.label)));
  }
  if (plots.empty()) return s + "# no plottable points\n";
  s += "plot " + fmt::format("{}", fmt::join(plots, ", \\\n     ")) + "\n";
  s += "set output\n";
  return s;
}

bool write_line_plot(const std::filesystem::path& png, const PlotSpec& spec) {
  static bool warned_missing = false;
  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) {
    if (!warned_missing) {
      warn(fmt::format("gnuplot not found; skipping plots (first: {})", png.string()));
      warned_missing = true;
    }
    return false;
  }
  std::error_code ec;
  if (png.has_parent_path()) std::filesystem::create_directories(png.parent_path(), ec);
  const std::string pid = std::to_string(::getpid());
  const std::filesystem::path tmp = png.string() + ".tmp." + pid + ".png";
  const std::filesystem::path err = png.string() + ".tmp." + pid + ".err";
  const std::string script = gnuplot_script(spec, tmp);
  if (script.find("\nplot ") == std::string::npos) {
    warn(fmt::format("no plottable points; skipping {}", png.string()));
    return false;
  }
  const std::string command = shell_quoted(gnuplot) + " 2>" + shell_quoted(err.string());
  FILE* pipe = ::popen(command.c_str(), "w");
  bool ok = pipe != nullptr;
  if (ok) {
    ok = std::fwrite(script.data(), 1, script.size(), pipe) == script.size();
    const int status = ::pclose(pipe);
    ok = ok && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  ok = ok && std::filesystem::exists(tmp) && std::filesystem::file_size(tmp, ec) > 0;
  if (ok) {
    std::filesystem::rename(tmp, png, ec);
    ok = !ec;
  }
  if (!ok) {
    std::string first_line;
    std::ifstream in(err);
    std::string line;
    while (first_line.empty() && std::getline(in, line)) {
      if (line.find_first_not_of(" \t^") != std::string::npos) first_line = line;
    }
    warn(fmt::format("gnuplot failed; skipping {}{}", png.string(),
                     first_line.empty() ? "" : ": " + first_line));
    std::filesystem::remove(tmp, ec);
  }
  std::filesystem::remove(err, ec);
  return ok;
}

}  // namespace normlab
