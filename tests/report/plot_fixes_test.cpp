// The PNG plots of a results folder, as the gnuplot scripts normlab writes for them: log
// loss axes, seed means on whole-number layer ticks, a log time axis for particle studies that
// span decades, and summary.md embedding the figures.
#include <gtest/gtest.h>

#include <regex>

#include "normlab/report/plot.hpp"
#include "report/tiny_study.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::captured_scripts;
using testing::run_normlab;
using testing::RunResult;
using testing::slurp;
using testing::TempDir;
using testing::tiny_study;

// The labels of the script's `set xtics (...)` (or ytics) line; empty without one.
std::vector<std::string> tic_labels(const std::string& script, const std::string& axis) {
  std::vector<std::string> labels;
  const size_t at = script.find("set " + axis + "tics (");
  if (at == std::string::npos) return labels;
  const std::string line = script.substr(at, script.find('\n', at) - at);
  const std::regex label_re("\"([^\"]+)\" [-0-9.e+]+(, |\\))");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), label_re);
       it != std::sregex_iterator(); ++it) {
    labels.push_back((*it)[1]);
  }
  return labels;
}

// The script of the one plot `png` of the tiny study.
std::string tiny_script(const std::string& png) {
  const testing::TinyStudy& s = tiny_study();
  EXPECT_TRUE(s.run.exited && s.run.exit_code == 0) << s.run.describe();
  const std::vector<std::string> scripts = captured_scripts(s.captures, png);
  EXPECT_EQ(scripts.size(), 1u) << png;
  return scripts.empty() ? "" : scripts[0];
}

TEST(PlotFixes, LossCurvesUseALogLossAxisSpanningTheData) {
  const std::string script = tiny_script("curves.png");
  EXPECT_NE(script.find("set logscale y\n"), std::string::npos);
  EXPECT_NE(script.find("set yrange ["), std::string::npos);  // the data's range, not whole decades
  EXPECT_GE(tic_labels(script, "y").size(), 2u);
}

TEST(PlotFixes, DepthPlotsAreSeedMeansWithWholeNumberTicks) {
  for (const std::string png :
       {"depth_hidden_rms.png", "depth_grad_norm.png", "depth_cosine.png", "depth_block_rms.png"}) {
    const std::string script = tiny_script(png);
    EXPECT_NE(script.find("(mean over 2 seeds)\"\n"), std::string::npos) << png << "\n" << script;
    const std::vector<std::string> labels = tic_labels(script, "x");
    ASSERT_FALSE(labels.empty()) << png << "\n" << script;
    for (const std::string& label : labels) {
      EXPECT_TRUE(std::regex_match(label, std::regex("-?[0-9]+"))) << png << ": " << label;
    }
  }
}

TEST(PlotFixes, SummaryMarkdownEmbedsTheFiguresThatExist) {
  const testing::TinyStudy& s = tiny_study();
  ASSERT_TRUE(s.run.exited && s.run.exit_code == 0) << s.run.describe();
  const std::string md = slurp(s.out / "summary.md");
  const std::regex image_re("!\\[[^\\]]+\\]\\(([^)]+)\\)");
  std::vector<std::string> files;
  for (auto it = std::sregex_iterator(md.begin(), md.end(), image_re); it != std::sregex_iterator();
       ++it) {
    files.push_back((*it)[1]);
    EXPECT_TRUE(fs::exists(s.out / files.back())) << files.back();
  }
  EXPECT_EQ(files,
            (std::vector<std::string>{"curves.png", "depth_hidden_rms.png", "depth_grad_norm.png",
                                      "depth_cosine.png", "depth_block_rms.png"}));
  EXPECT_NE(md.find("![validation loss](curves.png)"), std::string::npos);
}

TEST(PlotFixes, GnuplotIntegerAxisGetsWholeTicksOnly) {
  PlotSpec spec;
  spec.integer_x = true;
  spec.series.push_back({"one layer", {0, 1}, {0.5, 0.25}});
  const std::string script = gnuplot_script(spec, "/tmp/x.png");
  EXPECT_NE(script.find("set xtics (\"0\" 0, \"1\" 1)\n"), std::string::npos) << script;
  spec.integer_x = false;
  EXPECT_EQ(gnuplot_script(spec, "/tmp/x.png").find("set xtics"), std::string::npos);
}

TEST(PlotFixes, GnuplotLogAxisShowsLabelsWithinADecade) {
  PlotSpec spec;
  spec.log_y = true;
  spec.series.push_back({"loss", {0, 50, 100, 150}, {2.8, 2.6, 2.55, 2.5}});
  const std::string script = gnuplot_script(spec, "/tmp/x.png");
  EXPECT_NE(script.find("set yrange [2.4"), std::string::npos) << script;
  EXPECT_GE(tic_labels(script, "y").size(), 3u) << script;
}

// A particle study whose t spans more than two decades: a log t axis for mean cos and
// 1 − mean cos (the t = 0 rows left out of those plots only); one that does not: linear.
TEST(PlotFixes, ParticleCosinePlotsUseLogTimeWhenTSpansDecades) {
  for (const bool decades : {true, false}) {
    TempDir tmp;
    testing::write_bytes(tmp / "p.toml", std::string(R"(kind = "particles"
runs = ["pre"]
[defaults]
init = "symmetric"
n = 4
d = 4
beta = 2.0
dt = 0.05
)") + (decades ? "record_every = 0.05\nt_end = 20.0\n" : "record_every = 0.5\nt_end = 10.0\n"));
    const fs::path captures = tmp / "captures";
    const RunResult r =
        run_normlab({"run", (tmp / "p.toml").string(), "--out", (tmp / "out").string()},
                    {"NORMLAB_GNUPLOT=" + testing::fake_gnuplot(tmp.path(), captures).string()});
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
    EXPECT_NE(r.out.find("report: " + (tmp / "out" / "report.html").string() + "\n"),
              std::string::npos);
    for (const std::string png : {"mean_cos.png", "one_minus_mean_cos.png"}) {
      const std::vector<std::string> scripts = captured_scripts(captures, png);
      ASSERT_EQ(scripts.size(), 1u) << png;
      EXPECT_EQ(scripts[0].find("set logscale x\n") != std::string::npos, decades) << png;
      // On the log axis no data row has t = 0; on the linear one the first row is t = 0.
      EXPECT_EQ(scripts[0].find("<< EOD\n0 ") != std::string::npos, !decades) << png;
    }
    const std::string html = slurp(tmp / "out" / "report.html");
    EXPECT_NE(html.find("aria-label=\"mean pairwise cosine against t\""), std::string::npos);
    EXPECT_NE(html.find("aria-label=\"1 − mean cosine against t\""), std::string::npos);
    EXPECT_EQ(html.find("Log t axis") != std::string::npos, decades);
  }
}

}  // namespace
}  // namespace normlab
