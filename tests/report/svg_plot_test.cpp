// The SVG figures of the HTML report: ticks, bands, dropped points, escaping, the y range.
#include "normlab/report/svg_plot.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>

namespace normlab::svg {
namespace {

Series line(const std::string& label, std::vector<double> x, std::vector<double> y) {
  Series s;
  s.label = label;
  s.x = std::move(x);
  s.y = std::move(y);
  return s;
}

std::vector<double> major_values(const std::vector<Tick>& ticks) {
  std::vector<double> v;
  for (const Tick& t : ticks) {
    if (t.major) v.push_back(t.value);
  }
  return v;
}

std::vector<std::string> major_labels(const std::vector<Tick>& ticks) {
  std::vector<std::string> v;
  for (const Tick& t : ticks) {
    if (t.major) v.push_back(t.label + (t.exponent.empty() ? "" : "^" + t.exponent));
  }
  return v;
}

TEST(SvgTicks, LogAxisOverDecadesHasMajorTicksAtThePowersOfTen) {
  const std::vector<Tick> ticks = axis_ticks(0.5, 2e4, true, false);
  EXPECT_EQ(major_values(ticks), (std::vector<double>{1, 10, 100, 1000, 10000}));
  EXPECT_EQ(major_labels(ticks), (std::vector<std::string>{"1", "10", "100", "1000", "10000"}));
  // Minor ticks at 2..9 × 10^k inside the range, no label.
  size_t minors = 0;
  for (const Tick& t : ticks) {
    if (t.major) continue;
    ++minors;
    EXPECT_TRUE(t.label.empty());
    EXPECT_GE(t.value, 0.5);
    EXPECT_LE(t.value, 2e4);
  }
  EXPECT_EQ(minors, 5u + 8 * 4 + 1);  // 0.5..0.9; 2..9 × 1, 10, 100, 1000; 20000
}

TEST(SvgTicks, ManyDecadesKeepEveryFewDecadesWithExponentLabels) {
  const std::vector<Tick> ticks = axis_ticks(1e-25, 0.5, true, false);
  // 25 powers of ten: every 5th, at multiples of 5.
  EXPECT_EQ(major_values(ticks).size(), 5u);
  EXPECT_EQ(major_labels(ticks),
            (std::vector<std::string>{"10^\u221225", "10^\u221220", "10^\u221215", "10^\u221210",
                                      "10^\u22125"}));
}

TEST(SvgTicks, NarrowLogRangeStillHasSeveralLabels) {
  EXPECT_EQ(major_values(axis_ticks(1.9, 5.2, true, false)), (std::vector<double>{2, 3, 4, 5}));
  // Within a tenth of a decade: the linear ticks.
  const std::vector<double> v = major_values(axis_ticks(2.5, 2.8, true, false));
  ASSERT_GE(v.size(), 3u);
  for (double x : v) {
    EXPECT_GE(x, 2.5);
    EXPECT_LE(x, 2.8);
  }
}

TEST(SvgTicks, LinearAndIntegerTicks) {
  const std::vector<Tick> t = axis_ticks(-0.03, 1.03, false, false);
  EXPECT_EQ(major_labels(t), (std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"}));
  // A layer axis of a one- or two-layer model: whole numbers only, never 0.5.
  EXPECT_EQ(major_values(axis_ticks(-0.03, 1.03, false, true)), (std::vector<double>{0, 1}));
  for (double hi : {1.5, 3.2, 15.4, 47.0}) {
    const std::vector<double> v = major_values(axis_ticks(-0.2, hi, false, true));
    ASSERT_FALSE(v.empty()) << hi;
    for (double x : v) EXPECT_EQ(x, std::round(x)) << hi;
  }
}

TEST(SvgTicks, Labels) {
  EXPECT_EQ(tick_label(0).label, "0");
  EXPECT_EQ(tick_label(-0.5).label, "\u22120.5");
  EXPECT_EQ(tick_label(0.30000000000000004).label, "0.3");
  EXPECT_EQ(tick_label(20000).label, "20000");
  const Tick small = tick_label(2e-5);
  EXPECT_EQ(small.label, "2\u00d710");
  EXPECT_EQ(small.exponent, "\u22125");
  const Tick big = tick_label(1e6);
  EXPECT_EQ(big.label, "10");
  EXPECT_EQ(big.exponent, "6");
}

// The attribute `name` of every element `tag` with class `cls`.
std::vector<std::string> attributes(const std::string& svg, const std::string& tag,
                                    const std::string& cls, const std::string& name) {
  std::vector<std::string> out;
  const std::regex re("<" + tag + " class=\"" + cls + "\"[^>]* " + name + "=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

std::vector<std::pair<double, double>> parse_points(const std::string& points) {
  std::vector<std::pair<double, double>> out;
  std::istringstream in(points);
  std::string pair;
  while (in >> pair) {
    const size_t comma = pair.find(',');
    out.emplace_back(std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1)));
  }
  return out;
}

TEST(SvgRender, BandIsOneClosedPolygonAroundTheLine) {
  Figure f;
  f.x.label = "x";
  f.y.label = "y";
  f.series.push_back({"mean", {1, 2, 3}, {1, 2, 3}, {0.5, 1.5, 2.5}, {1.5, 2.5, 3.5}});
  const std::string s = render(f);
  const std::vector<std::string> bands = attributes(s, "polygon", "band", "points");
  ASSERT_EQ(bands.size(), 1u);
  const auto poly = parse_points(bands[0]);
  const auto line = parse_points(attributes(s, "polyline", "line", "points").at(0));
  ASSERT_EQ(poly.size(), 6u);  // the upper edge forward, the lower edge back
  ASSERT_EQ(line.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(poly[i].first, line[i].first);
    EXPECT_DOUBLE_EQ(poly[5 - i].first, line[i].first);
    EXPECT_LT(poly[i].second, line[i].second);      // upper bound above the line (pixels)
    EXPECT_GT(poly[5 - i].second, line[i].second);  // lower bound below it
  }
}

TEST(SvgRender, NonFinitePointsAreDroppedAndBreakTheLine) {
  Figure f;
  f.x.label = "x";
  f.y.label = "y";
  f.y.log = true;  // 0 and negatives cannot show
  f.series.push_back(line("s", {1, 2, 3, 4, 5, 6, 7}, {1, 2, NAN, 4, INFINITY, 6, 0}));
  const std::string s = render(f);
  const std::vector<std::string> lines = attributes(s, "polyline", "line", "points");
  ASSERT_EQ(lines.size(), 1u);  // 1-2 joined; 4 and 6 alone (markers only)
  EXPECT_EQ(parse_points(lines[0]).size(), 2u);
  size_t markers = 0;
  for (size_t at = 0; (at = s.find("<circle", at)) != std::string::npos; ++at) ++markers;
  EXPECT_EQ(markers, 4u);  // x = 1, 2, 4, 6
  for (const char* bad : {"nan", "inf", "NaN"}) EXPECT_EQ(s.find(bad), std::string::npos) << bad;
}

TEST(SvgRender, EscapesEveryTextAndHasNoExternalReference) {
  Figure f;
  f.title = "a <b>title</b> & \"more\"";
  f.x.label = "x <i>";
  f.y.label = "y 'q'";
  f.series.push_back(line("<script>alert(1)</script>", {1, 2}, {1, 2}));
  const std::string s = render(f);
  EXPECT_EQ(s.find("<b>"), std::string::npos);
  EXPECT_EQ(s.find("<i>"), std::string::npos);
  EXPECT_EQ(s.find("<script"), std::string::npos);
  EXPECT_NE(s.find("a &lt;b&gt;title&lt;/b&gt; &amp; &quot;more&quot;"), std::string::npos);
  EXPECT_NE(s.find("y &#39;q&#39;"), std::string::npos);
  EXPECT_NE(s.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(s.find("http"), std::string::npos);
  EXPECT_EQ(s.find("id="), std::string::npos);  // no ids: any number of figures per page
  EXPECT_EQ(escape("<&>\"'"), "&lt;&amp;&gt;&quot;&#39;");
}

TEST(SvgRender, ShadeAndLegend) {
  Figure f;
  f.x.label = "N";
  f.x.log = true;
  f.y.label = "tvd";
  f.shade = Shade{1, 8, "training lengths"};
  f.series.push_back(line("pre", {4, 8, 16}, {0.1, 0.2, 0.5}));
  const std::string s = render(f);
  EXPECT_EQ(attributes(s, "rect", "shade", "width").size(), 1u);
  EXPECT_NE(s.find(">training lengths</text>"), std::string::npos);
  EXPECT_NE(s.find(">pre</text>"), std::string::npos);
  // The x axis spans the data (4 .. 16), not the shade (from 1), which is clipped to the frame.
  EXPECT_EQ(s.find(">1</text>"), std::string::npos);
  EXPECT_NE(s.find(">4</text>"), std::string::npos);
}

// Values an axis is asked to include widen its range: figures that share one.
TEST(SvgRender, AnAxisCoversTheValuesItIsAskedToInclude) {
  Figure f;
  f.x.label = "N";
  f.y.label = "tvd";
  f.series.push_back(line("pre", {4, 8, 16}, {0.4, 0.45, 0.5}));
  const std::string narrow = render(f);
  f.y.include = {0.0, 1.0};
  const std::string shared = render(f);
  EXPECT_EQ(narrow.find(">0.8</text>"), std::string::npos);
  EXPECT_NE(shared.find(">0.8</text>"), std::string::npos);
}

TEST(SvgRender, AHugeBandDoesNotFlattenTheLines) {
  Figure f;
  f.x.label = "x";
  f.y.label = "y";
  f.series.push_back(
      {"two seeds", {1, 2, 3}, {0.2, 0.5, 0.8}, {-100, -100, -100}, {100, 100, 100}});
  const std::string s = render(f);
  // The y axis spans the lines and at most half their spread more per side.
  EXPECT_EQ(s.find(">100</text>"), std::string::npos);
  EXPECT_EQ(s.find(">\u2212100</text>"), std::string::npos);
  EXPECT_NE(s.find(">0.4</text>"), std::string::npos);
  EXPECT_EQ(attributes(s, "polygon", "band", "points").size(), 1u);  // drawn, cut at the frame
}

}  // namespace
}  // namespace normlab::svg
