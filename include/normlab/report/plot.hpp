// PNG line plots through gnuplot, for every subsystem's reports.
//
//   normlab::PlotSpec spec;
//   spec.title = "mean cosine";  spec.x_label = "t";  spec.y_label = "1 - mean cos";
//   spec.log_y = true;
//   spec.series.push_back({"post", ts, ys});     // one line per series, labelled in the key
//   normlab::write_line_plot("out/cos.png", spec);
//
// The data go inline in the gnuplot script (no side files); gnuplot runs in a pipe and writes to
// a temporary name that is renamed to the target only on success, so a plot is never
// half-written. Points that are not finite, or not positive on a log axis, are dropped.
// Log axes and integer axes get explicit ticks, the same as the HTML report's figures
// (svg_plot.hpp): the range is that of the plotted points (padded by 3%), not widened to whole
// decades, and a log axis spanning less than a decade still shows labelled ticks.
// If gnuplot is not installed (or fails), one warning line goes to stderr and the plot is skipped:
// plotting never makes a run fail. The gnuplot program is `gnuplot` on PATH, or the value of the
// environment variable NORMLAB_GNUPLOT.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace normlab {

struct PlotSeries {
  std::string label;         // shown in the key
  std::vector<double> x, y;  // same length
};

struct PlotSpec {
  std::string title;
  std::string x_label, y_label;
  bool log_x = false, log_y = false;
  int width = 900, height = 600;  // pixels
  std::vector<PlotSeries> series;
  bool integer_x = false;  // ticks at whole numbers only (layers, blocks, stream positions)
};

// Returns true if the PNG was written; false after a one-line warning otherwise.
bool write_line_plot(const std::filesystem::path& png, const PlotSpec& spec);

// The gnuplot script that write_line_plot feeds to gnuplot (data inline), writing to `output`.
std::string gnuplot_script(const PlotSpec& spec, const std::filesystem::path& output);

}  // namespace normlab
