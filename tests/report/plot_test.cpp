// The gnuplot wrapper: the script it writes, a real PNG when gnuplot exists, and skipping when not.
#include "normlab/report/plot.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace normlab {
namespace {

PlotSpec sample() {
  PlotSpec spec{"a \"quoted\" title", "t", "y", false, true, 900, 600, {}};
  spec.series.push_back({"decay", {0, 1, 2, 3}, {1, 0.1, 0.0, -1}});
  spec.series.push_back({"empty on log axis", {0, 1}, {0, -2}});
  return spec;
}

TEST(Plot, ScriptDropsPointsALogAxisCannotShow) {
  const std::string s = gnuplot_script(sample(), "/tmp/x.png");
  EXPECT_NE(s.find("set logscale y"), std::string::npos);
  EXPECT_NE(s.find("set title \"a \\\"quoted\\\" title\""), std::string::npos);
  EXPECT_NE(s.find("$data0 << EOD\n0 1\n1 0.1\nEOD"), std::string::npos);
  EXPECT_EQ(s.find("$data1"), std::string::npos);  // nothing positive to plot
  EXPECT_NE(s.find("title \"decay\""), std::string::npos);
}

std::filesystem::path temp_png(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("normlab_plot_" + std::to_string(::getpid()) + "_" + name + ".png");
}

TEST(Plot, WritesAPngWhenGnuplotExists) {
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0) GTEST_SKIP() << "no gnuplot";
  const std::filesystem::path png = temp_png("real");
  ASSERT_TRUE(write_line_plot(png, sample()));
  std::ifstream in(png, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  std::filesystem::remove(png);
}

TEST(Plot, SkipsWithoutFailingWhenGnuplotIsMissing) {
  const std::filesystem::path png = temp_png("missing");
  ::setenv("NORMLAB_GNUPLOT", "/nonexistent/gnuplot", 1);
  const bool written = write_line_plot(png, sample());
  ::unsetenv("NORMLAB_GNUPLOT");
  EXPECT_FALSE(written);
  EXPECT_FALSE(std::filesystem::exists(png));
}

}  // namespace
}  // namespace normlab
