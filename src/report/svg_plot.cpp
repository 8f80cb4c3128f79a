// Rendering a Figure as inline SVG (normlab/report/svg_plot.hpp).
//
// Layout, top to bottom: title (22 px), plot area with its tick labels and axis labels
// (Figure::plot_height), legend rows (18 px each). Points are mapped to pixels, then a point
// closer than half a pixel to the last one kept is skipped, so a 12 000-row trajectory costs
// about as many points as the plot is wide.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "normlab/report/svg_plot.hpp"

namespace normlab::svg {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kTitleHeight = 22, kLegendRow = 18, kRightMargin = 14, kTopGap = 8;
constexpr int kBottomMargin = 40;   // x tick labels and the x axis label
constexpr double kCharWidth = 6.6;  // average width of a 12 px sans-serif character, px

// Colour-blind-safe first (Okabe–Ito), then darker tones.
const char* const kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                "#56B4E9", "#000000", "#8C564B", "#7F7F7F", "#BCBD22"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

size_t code_points(std::string_view s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

double text_width(std::string_view s) {
  return kCharWidth * static_cast<double>(code_points(s));
}

bool usable(double v, bool log) {
  return std::isfinite(v) && (!log || v > 0);
}

// One axis: the data range and the map to pixels.
struct Scale {
  bool log = false;
  double lo = kInf, hi = -kInf;  // in data units
  double p0 = 0, p1 = 1;         // pixels of lo and hi
  double t(double v) const { return log ? std::log10(v) : v; }
  void include(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  // Pads the range by 3% per side (in log space on a log axis); a single value gets a range.
  void settle(bool integer) {
    if (lo > hi) {
      lo = log ? 1 : 0;
      hi = log ? 10 : 1;
      return;
    }
    if (lo == hi) {
      if (log) {
        lo /= 2;
        hi *= 2;
      } else {
        const double half = integer ? 0.5 : std::max(1e-12, std::abs(lo) * 0.1);
        lo -= half;
        hi += half;
      }
      return;
    }
    const double pad = 0.03 * (t(hi) - t(lo));
    if (log) {
      lo = std::pow(10.0, std::log10(lo) - pad);
      hi = std::pow(10.0, std::log10(hi) + pad);
    } else {
      lo -= pad;
      hi += pad;
    }
  }
  double px(double v) const { return p0 + (t(v) - t(lo)) / (t(hi) - t(lo)) * (p1 - p0); }
  bool inside(double v) const { return v >= lo && v <= hi; }
};

struct Point {
  double x, y;
};

std::string fmt_px(double v) {
  return fmt::format("{:.1f}", v);
}

// Consecutive runs of kept points, as pixel coordinates, half-pixel steps skipped.
std::vector<std::vector<Point>> runs_of(const std::vector<double>& xs,
                                        const std::vector<double>& ys, const Scale& sx,
                                        const Scale& sy) {
  std::vector<std::vector<Point>> runs;
  bool open = false;
  const size_t n = std::min(xs.size(), ys.size());
  for (size_t i = 0; i < n; ++i) {
    if (!usable(xs[i], sx.log) || !usable(ys[i], sy.log)) {
      open = false;
      continue;
    }
    if (!open) runs.emplace_back();
    open = true;
    runs.back().push_back({sx.px(xs[i]), sy.px(ys[i])});
  }
  for (auto& run : runs) {
    std::vector<Point> kept;
    for (size_t i = 0; i < run.size(); ++i) {
      const bool last = i + 1 == run.size();
      if (!kept.empty() && !last && std::abs(run[i].x - kept.back().x) < 0.5 &&
          std::abs(run[i].y - kept.back().y) < 0.5) {
        continue;
      }
      kept.push_back(run[i]);
    }
    run = std::move(kept);
  }
  return runs;
}

std::string points_attr(const std::vector<Point>& pts) {
  std::string s;
  for (const Point& p : pts)
    s += fmt::format("{}{},{}", s.empty() ? "" : " ", fmt_px(p.x), fmt_px(p.y));
  return s;
}

// The band of a series: one closed polygon per run of points whose x, lower and upper are
// all usable; the upper edge left to right, then the lower edge right to left.
std::string band_markup(const Series& s, const Scale& sx, const Scale& sy, const std::string& col) {
  if (s.lower.size() != s.x.size() || s.upper.size() != s.x.size()) return "";
  std::vector<double> xs, lo, hi;
  std::string out;
  auto flush = [&] {
    if (xs.size() >= 2) {
      const auto upper = runs_of(xs, hi, sx, sy), lower = runs_of(xs, lo, sx, sy);
      if (upper.size() == 1 && lower.size() == 1) {
        std::vector<Point> poly = upper[0];
        poly.insert(poly.end(), lower[0].rbegin(), lower[0].rend());
        out += fmt::format(
            "<polygon class=\"band\" points=\"{}\" fill=\"{}\" fill-opacity=\"0.18\" "
            "stroke=\"none\"/>\n",
            points_attr(poly), col);
      }
    }
    xs.clear();
    lo.clear();
    hi.clear();
  };
  for (size_t i = 0; i < s.x.size(); ++i) {
    // On a log axis a lower bound at or below zero reaches below the frame (and is cut there).
    const double lower =
        sy.log && std::isfinite(s.lower[i]) && s.lower[i] <= 0 ? sy.lo * 1e-3 : s.lower[i];
    if (usable(s.x[i], sx.log) && usable(lower, sy.log) && usable(s.upper[i], sy.log)) {
      xs.push_back(s.x[i]);
      lo.push_back(lower);
      hi.push_back(s.upper[i]);
    } else {
      flush();
    }
  }
  flush();
  return out;
}

std::string num(double v) {
  return std::isfinite(v) ? fmt::format("{:.4g}", v) : "-";
}

// Small circles at the points of a short series, each with a tooltip.
std::string marker_markup(const Series& s, const Scale& sx, const Scale& sy,
                          const std::string& col) {
  std::string out;
  const bool band = s.lower.size() == s.x.size() && s.upper.size() == s.x.size();
  for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
    if (!usable(s.x[i], sx.log) || !usable(s.y[i], sy.log)) continue;
    std::string tip = fmt::format("{}: {}, {}", s.label, num(s.x[i]), num(s.y[i]));
    if (band && std::isfinite(s.lower[i]) && std::isfinite(s.upper[i])) {
      tip += fmt::format(" [{}, {}]", num(s.lower[i]), num(s.upper[i]));
    }
    out +=
        fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"><title>{}</title></circle>\n",
                    fmt_px(sx.px(s.x[i])), fmt_px(sy.px(s.y[i])), col, escape(tip));
  }
  return out;
}

std::string tick_text(const Tick& t, double x, double y, const char* anchor) {
  std::string s = fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\">{}", fmt_px(x), fmt_px(y),
                              anchor, escape(t.label));
  if (!t.exponent.empty()) {
    s += fmt::format("<tspan dy=\"-5\" font-size=\"9\">{}</tspan>", escape(t.exponent));
  }
  return s + "</text>\n";
}

size_t label_chars(const Tick& t) {
  return code_points(t.label) + code_points(t.exponent);
}

}  // namespace

std::string color(int index) {
  return kPalette[((index % kPaletteSize) + kPaletteSize) % kPaletteSize];
}

// A line's colour, width and dash pattern as SVG attributes: data in its palette colour, solid
// or dashed; a reference thin, grey and dotted.
struct LineStyle {
  std::string col;
  const char* width;
  const char* dash;  // "" or a stroke-dasharray attribute
};

LineStyle line_style(const Series& s, size_t position) {
  if (s.reference) return {"#7F7F7F", "1.2", " stroke-dasharray=\"2 3\""};
  return {color(s.color >= 0 ? s.color : static_cast<int>(position)), "2",
          s.dashed ? " stroke-dasharray=\"6 4\"" : ""};
}

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render(const Figure& f) {
  Scale sx, sy, bands;
  sx.log = f.x.log;
  sy.log = bands.log = f.y.log;
  bool any = false;
  for (const Series& s : f.series) {
    const bool band = s.lower.size() == s.x.size() && s.upper.size() == s.x.size();
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!usable(s.x[i], sx.log)) continue;
      if (usable(s.y[i], sy.log)) {
        sx.include(s.x[i]);
        sy.include(s.y[i]);
        any = true;
      }
      if (band && usable(s.lower[i], sy.log)) bands.include(s.lower[i]);
      if (band && usable(s.upper[i], sy.log)) bands.include(s.upper[i]);
    }
  }
  // Bands widen the y range by at most half the lines' own span per side: an interval over
  // two seeds (t = 12.7) must not flatten the lines; wider bands are cut at the frame.
  if (any && bands.lo <= bands.hi) {
    const double span = sy.t(sy.hi) - sy.t(sy.lo);
    const double cap = span > 0 ? 0.5 * span : kInf;
    const double lo = std::max(sy.t(bands.lo), sy.t(sy.lo) - cap);
    const double hi = std::min(sy.t(bands.hi), sy.t(sy.hi) + cap);
    const auto value = [&](double t) { return sy.log ? std::pow(10.0, t) : t; };
    if (std::isfinite(lo)) sy.include(value(lo));
    if (std::isfinite(hi)) sy.include(value(hi));
  }
  // Values the caller asks the ranges to cover (a y range shared by several figures).
  for (double v : f.x.include) {
    if (any && usable(v, sx.log)) sx.include(v);
  }
  for (double v : f.y.include) {
    if (any && usable(v, sy.log)) sy.include(v);
  }
  sx.settle(f.x.integer);
  sy.settle(f.y.integer);
  const std::vector<Tick> xt = axis_ticks(sx.lo, sx.hi, sx.log, f.x.integer);
  const std::vector<Tick> yt = axis_ticks(sy.lo, sy.hi, sy.log, f.y.integer);

  size_t y_chars = 1;
  for (const Tick& t : yt) {
    if (t.major) y_chars = std::max(y_chars, label_chars(t));
  }
  const double title_h = f.title.empty() ? 0 : kTitleHeight;
  const double left = 26 + kCharWidth * static_cast<double>(y_chars) + 8;
  const double top = title_h + kTopGap;
  const double bottom = title_h + f.plot_height - kBottomMargin;
  const double right = f.width - kRightMargin;
  sx.p0 = left;
  sx.p1 = right;
  sy.p0 = bottom;
  sy.p1 = top;

  // Legend entries flow in rows under the plot.
  struct Entry {
    std::string label;
    LineStyle style;
    bool band, shade;
  };
  std::vector<Entry> entries;
  if (f.shade && !f.shade->label.empty())
    entries.push_back({f.shade->label, {"#888888", "2", ""}, false, true});
  for (size_t i = 0; i < f.series.size(); ++i) {
    const Series& s = f.series[i];
    if (s.label.empty()) continue;
    bool band = false;  // a band with at least one finite interval
    for (size_t k = 0; k < s.lower.size() && k < s.upper.size() && s.lower.size() == s.x.size();
         ++k) {
      band = band || (std::isfinite(s.lower[k]) && std::isfinite(s.upper[k]));
    }
    entries.push_back({s.label, line_style(s, i), band, false});
  }
  std::vector<std::pair<double, double>> at;  // per entry: x, row
  double ex = left, row = 0;
  for (const Entry& e : entries) {
    const double w = 30 + text_width(e.label) + 16;
    if (ex > left && ex + w > right) {
      ex = left;
      ++row;
    }
    at.emplace_back(ex, row);
    ex += w;
  }
  const double legend_h = entries.empty() ? 0 : (row + 1) * kLegendRow + 6;
  const double height = title_h + f.plot_height + legend_h;

  std::string s = fmt::format(
      "<svg class=\"figure\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n",
      f.width, fmt_px(height), f.width, fmt_px(height), escape(f.title));
  s +=
      fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", f.width, fmt_px(height));
  if (!f.title.empty()) {
    s += fmt::format(
        "<text x=\"{}\" y=\"16\" text-anchor=\"middle\" font-size=\"13\" "
        "font-weight=\"bold\">{}</text>\n",
        fmt_px(f.width / 2.0), escape(f.title));
  }
  // Shaded interval, clipped to the plot.
  if (any && f.shade) {
    double a = std::max(f.shade->from, sx.lo), b = std::min(f.shade->to, sx.hi);
    if (sx.log) a = std::max(a, sx.lo);
    if (a <= b && usable(a, sx.log) && usable(b, sx.log)) {
      // At least 3 px wide, so that a single training length still shows.
      double x0 = sx.px(a), w = sx.px(b) - x0;
      if (w < 3) {
        x0 += w / 2 - 1.5;
        w = 3;
      }
      s += fmt::format(
          "<rect class=\"shade\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
          "fill=\"#888888\" fill-opacity=\"0.15\"/>\n",
          fmt_px(x0), fmt_px(top), fmt_px(w), fmt_px(bottom - top));
    }
  }
  // Grid at the major ticks.
  for (const Tick& t : xt) {
    if (!t.major || !sx.inside(t.value)) continue;
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n",
                     fmt_px(sx.px(t.value)), fmt_px(top), fmt_px(bottom));
  }
  for (const Tick& t : yt) {
    if (!t.major || !sy.inside(t.value)) continue;
    s += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\" stroke=\"#e4e4e4\"/>\n",
                     fmt_px(sy.px(t.value)), fmt_px(left), fmt_px(right));
  }
  // Bands under every line, then lines, then markers, in a nested <svg> over the plot area:
  // it clips what lies outside (a band cut at the frame) without a clipPath id.
  s += fmt::format(
      "<svg x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}\" viewBox=\"{0} {1} {2} {3}\" "
      "overflow=\"hidden\">\n",
      fmt_px(left), fmt_px(top), fmt_px(right - left), fmt_px(bottom - top));
  for (size_t i = 0; i < f.series.size(); ++i) {
    const Series& ser = f.series[i];
    s += band_markup(ser, sx, sy, color(ser.color >= 0 ? ser.color : static_cast<int>(i)));
  }
  for (size_t i = 0; i < f.series.size(); ++i) {
    const Series& ser = f.series[i];
    const LineStyle style = line_style(ser, i);
    size_t points = 0;
    for (const auto& run : runs_of(ser.x, ser.y, sx, sy)) {
      points += run.size();
      if (run.size() < 2) continue;
      s += fmt::format(
          "<polyline class=\"line\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
          "stroke-width=\"{}\"{}/>\n",
          points_attr(run), style.col, style.width, style.dash);
    }
    if (points > 0 && ser.x.size() <= 30 && !ser.dashed && !ser.reference) {
      s += marker_markup(ser, sx, sy, style.col);
    }
  }
  s += "</svg>\n";
  // Frame, ticks and labels.
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#333333\"/>\n",
      fmt_px(left), fmt_px(top), fmt_px(right - left), fmt_px(bottom - top));
  for (const Tick& t : xt) {
    if (!sx.inside(t.value)) continue;
    const double x = sx.px(t.value);
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333333\"/>\n",
                     fmt_px(x), fmt_px(bottom), fmt_px(bottom + (t.major ? 5 : 3)));
    if (t.major) s += tick_text(t, x, bottom + 18, "middle");
  }
  for (const Tick& t : yt) {
    if (!sy.inside(t.value)) continue;
    const double y = sy.px(t.value);
    s += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\" stroke=\"#333333\"/>\n",
                     fmt_px(y), fmt_px(left - (t.major ? 5 : 3)), fmt_px(left));
    if (t.major) s += tick_text(t, left - 7, y + 4, "end");
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                   fmt_px((left + right) / 2), fmt_px(bottom + 35), escape(f.x.label));
  s += fmt::format(
      "<text transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      fmt_px((top + bottom) / 2), escape(f.y.label));
  if (!any) {
    s += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#888888\">no data to "
        "plot</text>\n",
        fmt_px((left + right) / 2), fmt_px((top + bottom) / 2));
  }
  // Legend.
  const double legend_top = title_h + f.plot_height + 4;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    const double x = at[i].first, y = legend_top + at[i].second * kLegendRow + 9;
    s += "<g class=\"legend-entry\">";
    if (e.shade || e.band) {
      s += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"12\" fill=\"{}\" "
          "fill-opacity=\"{}\"/>",
          fmt_px(x), fmt_px(y - 6), e.style.col, e.shade ? "0.3" : "0.18");
    }
    if (!e.shade) {
      s += fmt::format(
          "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
          "stroke-width=\"{}\"{}/>",
          fmt_px(x), fmt_px(y), fmt_px(x + 24), fmt_px(y), e.style.col, e.style.width,
          e.style.dash);
    }
    s += fmt::format("<text x=\"{}\" y=\"{}\">{}</text></g>\n", fmt_px(x + 30), fmt_px(y + 4),
                     escape(e.label));
  }
  return s + "</svg>";
}

}  // namespace normlab::svg
