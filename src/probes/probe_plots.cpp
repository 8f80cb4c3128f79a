#include "normlab/probes/probe_plots.hpp"
#include "normlab/io/temp_folder.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

extern char** environ;

namespace normlab {
namespace fs = std::filesystem;
namespace {

std::string gnuplot_path() {
  static const std::string path = [] {
    const char* env = std::getenv("PATH");
    std::stringstream dirs(env != nullptr ? env : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
      if (dir.empty()) continue;
      const fs::path p = fs::path(dir) / "gnuplot";
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
    return std::string();
  }();
  return path;
}

bool warn_missing() {
  static bool warned = false;
  if (!warned) {
    std::fprintf(stderr, "normlab: gnuplot not found on PATH; skipping the plots\n");
    warned = true;
  }
  return false;
}

// A gnuplot single-quoted string ('' stands for one quote).
std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::string val(double v) {
  return std::isfinite(v) ? fmt::format("{:.9g}", v) : "NaN";
}

// Runs `script` (which refers to the data files as DATA(name) → their path) with the output
// set to a temporary PNG beside `png`, then renames it into place.
class Plot {
 public:
  explicit Plot(std::string png) : png_(std::move(png)) {}
  // Returns the quoted path of a data file with these contents.
  std::string data(const std::string& name, const std::string& contents) {
    files_.emplace_back(name, contents);
    return quote((dir_.path() / name).string());
  }
  bool render(const std::string& script, int width, int height) {
    if (gnuplot_path().empty()) return warn_missing();
    if (dir_.path().empty()) {
      std::fprintf(stderr, "normlab: cannot create a temporary directory; skipping %s\n",
                   png_.c_str());
      return false;
    }
    for (const auto& [name, contents] : files_) {
      std::ofstream(dir_.path() / name, std::ios::binary) << contents;
    }
    const std::string tmp = png_ + fmt::format(".tmp.{}", ::getpid());
    const fs::path script_file = dir_.path() / "plot.gp";
    std::ofstream(script_file, std::ios::binary)
        << fmt::format("set terminal pngcairo size {},{} font 'Sans,10'\nset output {}\n", width,
                       height, quote(tmp))
        << script << "\nunset output\n";
    const fs::path log = dir_.path() / "gnuplot.log";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const std::string exe = gnuplot_path(), arg = script_file.string();
    char* argv[] = {const_cast<char*>(exe.c_str()), const_cast<char*>(arg.c_str()), nullptr};
    pid_t pid = 0;
    int status = 0;
    const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    const bool ok = rc == 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                    WEXITSTATUS(status) == 0 && fs::exists(tmp);
    std::error_code ec;
    if (!ok) {
      std::string first;
      std::ifstream in(log);
      std::getline(in, first);
      while (first.empty() && std::getline(in, first)) {
      }
      std::fprintf(stderr, "normlab: gnuplot failed on %s%s%s\n", png_.c_str(),
                   first.empty() ? "" : ": ", first.c_str());
      fs::remove(tmp, ec);
      return false;
    }
    fs::rename(tmp, png_, ec);
    if (ec) {
      std::fprintf(stderr, "normlab: cannot write %s: %s\n", png_.c_str(), ec.message().c_str());
      fs::remove(tmp, ec);
      return false;
    }
    return true;
  }

 private:
  std::string png_;
  TempFolder dir_{"normlab_plot"};
  std::vector<std::pair<std::string, std::string>> files_;
};

// At most `cap` indices of [0, n), evenly spread, always the first and the last.
std::vector<int> spread(int n, int cap) {
  std::vector<int> out;
  if (n <= cap) {
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (int k = 0; k < cap; ++k) {
    const int i = static_cast<int>(std::lround(double(k) * (n - 1) / (cap - 1)));
    if (out.empty() || out.back() != i) out.push_back(i);
  }
  return out;
}

}  // namespace

bool gnuplot_available() {
  return !gnuplot_path().empty();
}

std::vector<std::string> plot_variance(const VarianceResult& r, const std::string& prefix) {
  std::vector<std::string> written;
  if (!gnuplot_available()) {
    warn_missing();
    return written;
  }
  const std::vector<int> layers = spread(r.layers, 6);
  // std per length: length, then per plotted layer attn_out and attn_out_normed.
  std::map<int64_t, std::map<std::pair<int, int>, double>> table;
  for (const VarianceRow& row : r.rows) {
    if (row.site == VarianceSite::attn_out || row.site == VarianceSite::attn_out_normed) {
      table[row.length][{row.layer, static_cast<int>(row.site)}] = row.stats.mean_feature_std;
    }
  }
  std::string data;
  for (const auto& [length, cols] : table) {
    data += std::to_string(length);
    for (int l : layers) {
      for (VarianceSite site : {VarianceSite::attn_out, VarianceSite::attn_out_normed}) {
        const auto it = cols.find({l, static_cast<int>(site)});
        data += " " + val(it == cols.end() ? NAN : it->second);
      }
    }
    data += "\n";
  }
  {
    Plot plot(prefix + ".png");
    const std::string file = plot.data("std.dat", data);
    std::string s =
        "set logscale x 2\nset format x '2^{%L}'\nset logscale y 10\nset format y '10^{%L}'\n"
        "set grid\nset key outside right\n"
        "set xlabel 'length'\nset ylabel 'mean per-feature std'\n"
        "set title 'attention output spread against length (dashed: after the output norm)'\n";
    std::string plots;
    double anchor = NAN;
    int64_t first_length = table.empty() ? 1 : table.begin()->first;
    for (size_t k = 0; k < layers.size(); ++k) {
      const int l = layers[k];
      const int col = 2 + 2 * static_cast<int>(k);
      const LineFit* fit = nullptr;
      for (const VarianceFit& f : r.fits) {
        if (f.layer == l && f.site == VarianceSite::attn_out) fit = &f.fit;
      }
      if (k == 0 && !table.empty()) {
        anchor = table.begin()->second.count({l, 0}) ? table.begin()->second.at({l, 0}) : NAN;
      }
      plots += fmt::format(
          "{} using 1:{} with linespoints lc {} pt 7 title 'layer {} (slope {})', ", file, col,
          k + 1, l, fit && std::isfinite(fit->slope) ? fmt::format("{:.3f}", fit->slope) : "?");
      if (r.norm_after != "none") {
        plots += fmt::format("{} using 1:{} with linespoints lc {} dt 2 pt 6 notitle, ", file,
                             col + 1, k + 1);
      }
      if (fit && std::isfinite(fit->slope)) {
        plots += fmt::format("exp({}) * x**({}) with lines lc {} dt 3 notitle, ",
                             val(fit->intercept), val(fit->slope), k + 1);
      }
    }
    if (std::isfinite(anchor)) {
      plots += fmt::format("{} * (x / {})**(-0.5) with lines lc 'gray' dt 4 title 'N^{{-1/2}}'",
                           val(anchor), first_length);
    } else if (!plots.empty()) {
      plots.resize(plots.size() - 2);
    }
    s += "plot " + plots + "\n";
    if (plot.render(s, 1000, 600)) written.push_back(prefix + ".png");
  }
  // Histograms: up to four panels.
  std::vector<const VarianceHistogram*> panels;
  for (int l : spread(r.layers, 2)) {
    for (const VarianceHistogram& h : r.histograms) {
      if (h.layer == l) panels.push_back(&h);
    }
  }
  if (!panels.empty()) {
    Plot plot(prefix + "_hist.png");
    const int cols = static_cast<int>(std::min<size_t>(panels.size(), 2));
    const int rows = static_cast<int>((panels.size() + 1) / 2);
    std::string s =
        fmt::format("set multiplot layout {},{}\nset grid\nset ylabel 'density'\n", rows, cols);
    for (size_t k = 0; k < panels.size(); ++k) {
      const VarianceHistogram& h = *panels[k];
      std::string d;
      for (size_t b = 0; b + 1 < h.edges.size(); ++b) {
        d += val(0.5 * (h.edges[b] + h.edges[b + 1]));
        for (size_t i = 0; i < h.lengths.size(); ++i) d += " " + val(h.density[i][b]);
        d += "\n";
      }
      const std::string file = plot.data(fmt::format("hist{}.dat", k), d);
      s += fmt::format(
          "set title 'layer {} {}'\nset xlabel 'feature value'\nplot ", h.layer,
          to_string(h.site) == "attn_out" ? "attention output" : "attention output after its norm");
      for (size_t i = 0; i < h.lengths.size(); ++i) {
        s += fmt::format("{}{} using 1:{} with steps lw 2 title 'N = {}'", i ? ", " : "", file,
                         2 + i, h.lengths[i]);
      }
      s += "\n";
    }
    s += "unset multiplot\n";
    if (plot.render(s, 1000, 400 * rows)) written.push_back(prefix + "_hist.png");
  }
  return written;
}

std::vector<std::string> plot_dispersion(const DispersionResult& r, const std::string& prefix) {
  std::vector<std::string> written;
  if (!gnuplot_available()) {
    warn_missing();
    return written;
  }
  // Curves: every (layer, head) when there are at most 8, else the head average of up to 8
  // layers.
  const bool per_head = r.layers * r.heads <= 8;
  const std::vector<int> layers = per_head ? spread(r.layers, r.layers) : spread(r.layers, 8);
  std::string data, titles;
  int curves = 0;
  std::map<int64_t, std::vector<double>> mw, ent;
  std::map<int64_t, std::pair<double, double>> uniform;
  for (const DispersionRow& row : r.rows) {
    uniform[row.length] = {row.uniform_max_weight, row.uniform_entropy};
  }
  std::vector<std::string> names;
  for (int l : layers) {
    for (int h = 0; h < (per_head ? r.heads : 1); ++h) {
      names.push_back(per_head && r.heads > 1 ? fmt::format("layer {} head {}", l, h)
                                              : fmt::format("layer {}", l));
      for (const auto& [length, u] : uniform) {
        double m = 0, e = 0;
        int count = 0;
        for (const DispersionRow& row : r.rows) {
          if (row.length != length || row.layer != l || (per_head && row.head != h)) continue;
          m += row.max_weight_mean;
          e += row.entropy_mean;
          ++count;
        }
        mw[length].push_back(count ? m / count : NAN);
        ent[length].push_back(count ? e / count : NAN);
      }
      ++curves;
    }
  }
  for (const auto& [length, u] : uniform) {
    data += fmt::format("{} {} {}", length, val(u.first), val(u.second));
    for (int k = 0; k < curves; ++k) data += " " + val(mw[length][k]) + " " + val(ent[length][k]);
    data += "\n";
  }
  Plot plot(prefix + ".png");
  const std::string file = plot.data("dispersion.dat", data);
  std::string s =
      "set multiplot layout 1,2\nset grid\nset logscale x 2\nset format x '2^{%L}'\n"
      "set xlabel 'length'\nset key bottom left\n"
      "set logscale y\nset ylabel 'max attention weight'\nset title 'largest weight'\nplot ";
  s += fmt::format("{} using 1:2 with lines lc 'gray' dt 2 title 'uniform 1/keys'", file);
  for (int k = 0; k < curves; ++k) {
    s += fmt::format(", {} using 1:{} with linespoints pt 7 title '{}'", file, 4 + 2 * k, names[k]);
  }
  s += "\nunset logscale y\nset key top left\nset ylabel 'entropy (nats)'\n"
       "set title 'attention entropy'\nplot ";
  s += fmt::format("{} using 1:3 with lines lc 'gray' dt 2 title 'uniform ln keys'", file);
  for (int k = 0; k < curves; ++k) {
    s += fmt::format(", {} using 1:{} with linespoints pt 7 title '{}'", file, 5 + 2 * k, names[k]);
  }
  s += "\nunset multiplot\n";
  if (plot.render(s, 1200, 500)) written.push_back(prefix + ".png");
  return written;
}

std::vector<std::string> plot_depth(const DepthResult& r, const std::string& prefix) {
  std::vector<std::string> written;
  if (!gnuplot_available()) {
    warn_missing();
    return written;
  }
  const int spl = r.sublayers > r.layers ? 2 : 1;
  // x = depth in layers: sublayer p at p / spl, the final stream at L.
  std::string pos, grads;
  for (const DepthPosition& d : r.positions) {
    const double x = static_cast<double>(d.position) / spl;
    const bool attn = d.kind == "attn";
    pos +=
        fmt::format("{} {} {} {} {} {} {}\n", val(x), val(d.hidden_rms),
                    attn ? val(d.branch_rms) : "NaN", d.kind == "mlp" ? val(d.branch_rms) : "NaN",
                    val(d.branch_normed_rms), val(d.cosine), val(d.erank));
  }
  for (const DepthGroup& g : r.groups) {
    if (g.layer >= 0) grads += fmt::format("{} {}\n", g.layer, val(g.grad_norm));
  }
  Plot plot(prefix + ".png");
  const std::string pf = plot.data("positions.dat", pos), gf = plot.data("grads.dat", grads);
  bool normed = false;
  for (const DepthPosition& d : r.positions) normed = normed || std::isfinite(d.branch_normed_rms);
  std::string s = fmt::format(
      "set multiplot layout 2,2\nset grid\nset xlabel 'depth (layers)'\nset xrange [0:{}]\n",
      r.layers);
  s += fmt::format(
      "set logscale y\nset title 'magnitudes (RMS)'\nset key top left\n"
      "plot {0} using 1:2 with linespoints pt 7 title 'stream h', "
      "{0} using 1:3 with points pt 5 title 'attention output', "
      "{0} using 1:4 with points pt 9 title 'MLP output'{1}\n",
      pf,
      normed ? fmt::format(", {} using 1:5 with points pt 6 title 'after output norm'", pf) : "");
  s += fmt::format(
      "set title 'gradient norm per layer (loss {})'\nset xlabel 'layer'\n"
      "plot {} using 1:2 with linespoints pt 7 notitle\nunset logscale y\n",
      val(std::round(r.loss * 1e4) / 1e4), gf);
  s += fmt::format(
      "set xlabel 'depth (layers)'\nset title 'mean pairwise cosine of tokens'\n"
      "set yrange [*:1]\nplot {0} using 1:6 with linespoints pt 7 notitle\nset yrange [*:*]\n"
      "set title 'effective rank of the token matrix'\nset yrange [0:*]\n"
      "plot {0} using 1:7 with linespoints pt 7 notitle\nunset multiplot\n",
      pf);
  if (plot.render(s, 1200, 900)) written.push_back(prefix + ".png");
  return written;
}

std::vector<std::string> plot_dilution(const DilutionResult& r, const std::string& prefix) {
  std::vector<std::string> written;
  if (!gnuplot_available()) {
    warn_missing();
    return written;
  }
  // |gap| per size: s, then one column per site (fits' order); a 1/s line through the first
  // point of the branch.
  std::map<int64_t, std::map<int, double>> table;
  for (const DilutionRow& row : r.rows) {
    table[row.s][static_cast<int>(row.site)] = std::abs(row.gap);
  }
  std::string data;
  double ref_s = 0, ref_gap = 0;
  for (const auto& [s, cols] : table) {
    data += std::to_string(s);
    for (const DilutionFit& f : r.fits) {
      auto it = cols.find(static_cast<int>(f.site));
      data += " " + (it != cols.end() && it->second > 0 ? val(it->second) : std::string("NaN"));
      if (f.site == DilutionSite::branch && ref_s == 0 && it != cols.end() && it->second > 0) {
        ref_s = static_cast<double>(s);
        ref_gap = it->second;
      }
    }
    data += "\n";
  }
  Plot plot(prefix + ".png");
  const std::string df = plot.data("gaps.dat", data);
  std::string s = fmt::format(
      "set logscale xy\nset grid\nset key top right\nset xlabel 'input size s'\n"
      "set ylabel '|mean logit gap|, absent - present'\n"
      "set title 'logit gap at the query against the input size (v = {})'\nplot ",
      r.v);
  for (size_t k = 0; k < r.fits.size(); ++k) {
    const DilutionFit& f = r.fits[k];
    s += fmt::format("{} using 1:{} with linespoints pt 7 title {}, ", df, k + 2,
                     quote(fmt::format("{} (slope {})", to_string(f.site),
                                       val(std::round(f.fit.slope * 1000) / 1000))));
  }
  if (ref_s > 0) {
    s += fmt::format("{} * {} / x with lines dt 2 lc rgb 'gray' title '1/s'", val(ref_gap),
                     val(ref_s));
  } else {
    s.resize(s.size() - 2);
  }
  s += "\n";
  if (plot.render(s, 900, 600)) written.push_back(prefix + ".png");
  return written;
}

}  // namespace normlab
