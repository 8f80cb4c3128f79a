// Line figures as inline SVG, for the HTML report (html_report.hpp): series with an optional
// band (lower..upper), linear or log axes with readable ticks, a shaded x-interval, a legend.
//
//   svg::Figure f;
//   f.title = "tvd against length (raw weights)";
//   f.x = {"task length N", /*log=*/true};
//   f.y = {"tvd"};
//   f.shade = svg::Shade{1, 8, "training lengths"};
//   f.series.push_back({"pre", ns, means, lows, highs});
//   std::string markup = svg::render(f);          // "<svg ...>...</svg>"
//
// Coordinates are in CSS pixels. A point is dropped when a coordinate is not finite or not
// positive on a log axis; a dropped point breaks the line (and the band) there. The y range
// covers the lines and their bands, but a band widens it by at most half the lines' span per
// side (wider bands are cut at the frame; on a log axis a lower bound ≤ 0 reaches below it). The
// output has
// no XML namespace, ids, scripts or external references: it is meant to sit inside an HTML
// page, any number of times.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace normlab::svg {

struct Series {
  std::string label;                 // the legend entry ("" : not in the legend)
  std::vector<double> x, y;          // same length
  std::vector<double> lower, upper;  // a band around the line: empty, or as long as x
  bool dashed = false;               // dashed lines (fits, references) have no point markers
  int color = -1;                    // palette index; -1: the series' position in the figure
  // A reference, not data (a law such as 1/s or N^-1/2, a chance level): thin grey dots, in
  // the legend too, whatever `color` and `dashed` say.
  bool reference = false;
};

struct Axis {
  std::string label;
  bool log = false;      // base-10 log scale (ticks at decades when the range spans them)
  bool integer = false;  // ticks at integers only (layers, blocks, positions)
  // Values the range covers besides the data, e.g. the ends of a range several figures share.
  std::vector<double> include = {};
};

// A shaded interval of the x axis (e.g. the training lengths), clipped to the plot: the x range
// spans the data, not the shade.
struct Shade {
  double from = 0, to = 0;
  std::string label;  // in the legend
};

struct Figure {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  std::optional<Shade> shade;
  int width = 560;        // the whole figure, px
  int plot_height = 300;  // the plot area with its axes, px; the title and legend add to it
};

// One axis tick: its value, its label (mantissa) and an optional superscript exponent
// ("10" and "−3" for 10^−3); minor ticks have no label.
struct Tick {
  double value = 0;
  std::string label, exponent;
  bool major = true;
};

// The ticks of an axis showing [lo, hi] (lo < hi; both > 0 for log):
//   linear: 1, 2 or 5 × 10^k steps, about 5 to 10 of them; with `integer`, whole steps;
//   log:    with three or more powers of ten in range, every decade 10^k (beyond 8 decades
//           those with k a multiple of 2, 5, 10, ...) and minor ticks at 2..9 × 10^k up to 6
//           decades; else labels at 1, 2, 5 × 10^k (1, 2, ..., 9 × 10^k when the range spans at
//           most a decade), or the linear ticks when those give fewer than three labels and the
//           linear ones more.
std::vector<Tick> axis_ticks(double lo, double hi, bool log, bool integer);

// A number as a tick label: up to 4 significant digits, "−" for minus, and mantissa and
// exponent split for magnitudes below 1e-3 or from 1e5 on ("2×10", "5").
Tick tick_label(double value);

// The figure as one <svg> element (width Figure::width; height the plot, title and legend).
// Solid series of at most 30 points get a marker per point, with the values as its tooltip.
std::string render(const Figure& figure);

// Text for HTML or SVG content and attribute values: & < > " ' replaced by entities.
std::string escape(std::string_view text);

// The palette's colour for an index (cycles).
std::string color(int index);

}  // namespace normlab::svg
