// The report's figures for studies (src/report/study_figures.cpp, docs/report.md): facets by
// sweep point, at most 8 schemes to a figure, one colour per scheme on the whole page, the better
// direction on the y axis, bands from 3 seeds; a folder whose study has not finished; several
// folders side by side.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/tiny_study.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::occurrences;
using testing::run_normlab;
using testing::slurp;
using testing::TempDir;

// The legend colours of the entries labelled `label` over the whole page.
std::set<std::string> legend_colours(const std::string& html, const std::string& label) {
  const std::regex entry(
      "stroke=\"(#[0-9A-F]{6})\" stroke-width=\"2\"/><text x=\"[^\"]*\" "
      "y=\"[^\"]*\">" +
      label + "</text>");
  std::set<std::string> colours;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), entry);
       it != std::sregex_iterator(); ++it) {
    colours.insert((*it)[1].str());
  }
  return colours;
}

// A finished study written by hand: experiment.json and summary.csv of `labels` (each
// "SCHEME" or "SCHEME POINT" with `points`), TVD at lengths 2 and 8, `seeds` seeds.
fs::path hand_made_study(const fs::path& out, const std::vector<std::string>& schemes,
                         const std::vector<std::string>& points, int seeds) {
  fs::create_directories(out);
  nlohmann::json variants = nlohmann::json::array();
  std::string csv = "variant,weights,metric,length,mean,ci_half_width,seeds,ci_low,ci_high\n";
  for (const std::string& point : points) {
    for (size_t i = 0; i < schemes.size(); ++i) {
      const std::string label = point.empty() ? schemes[i] : schemes[i] + " " + point;
      nlohmann::json v{{"label", label}, {"slug", label}};
      if (!point.empty()) v["base_label"] = schemes[i];
      variants.push_back(v);
      for (int n : {2, 8}) {
        const double mean = 0.1 * static_cast<double>(i % 5) + 0.01 * n;
        csv += fmt::format("{},raw,tvd,{},{},0.02,{},{},{}\n", label, n, mean, seeds, mean - 0.02,
                           mean + 0.02);
      }
    }
  }
  nlohmann::json seed_list = nlohmann::json::array();
  for (int s = 1; s <= seeds; ++s) seed_list.push_back(s);
  const nlohmann::json e{{"name", out.filename().string()},
                         {"variants", variants},
                         {"seeds", seed_list},
                         {"train", {{"min_len", 1}, {"max_len", 4}}}};
  std::ofstream(out / "experiment.json") << e.dump(2);
  std::ofstream(out / "summary.csv") << csv;
  return out;
}

std::string report_of(const fs::path& out) {
  const auto r = run_normlab({"report", out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return slurp(out / "report.html");
}

TEST(StudyFigures, TenSchemesMakeTwoPanelsOfAtMostEight) {
  TempDir tmp;
  std::vector<std::string> schemes;
  for (int i = 1; i <= 10; ++i) schemes.push_back(fmt::format("s{}", i));
  const std::string html = report_of(hand_made_study(tmp / "ten", schemes, {""}, 5));
  EXPECT_EQ(occurrences(html, "aria-label=\"tvd against length (raw weights, schemes 1–8 of 10)\""),
            1u);
  EXPECT_EQ(
      occurrences(html, "aria-label=\"tvd against length (raw weights, schemes 9–10 of 10)\""), 1u);
  EXPECT_EQ(occurrences(html, "<svg class=\"figure\""), 2u);
  // The y axis says which way TVD is better; five seeds give bands.
  EXPECT_NE(html.find("tvd (lower is better)"), std::string::npos);
  EXPECT_GE(occurrences(html, "<polygon class=\"band\""), 10u);
  // Ten schemes, ten colours (the palette's ten).
  std::set<std::string> all;
  for (const std::string& s : schemes) {
    const std::set<std::string> c = legend_colours(html, s);
    ASSERT_EQ(c.size(), 1u) << s;
    all.insert(*c.begin());
  }
  EXPECT_EQ(all.size(), 10u);
}

TEST(StudyFigures, ASweepIsFacetedByPointWithOneColourPerScheme) {
  TempDir tmp;
  const std::string html =
      report_of(hand_made_study(tmp / "swept", {"pre", "post"}, {"lr=0.1", "lr=0.2"}, 2));
  EXPECT_EQ(occurrences(html, "aria-label=\"tvd against length (raw weights, lr=0.1)\""), 1u);
  EXPECT_EQ(occurrences(html, "aria-label=\"tvd against length (raw weights, lr=0.2)\""), 1u);
  // Lines are named by scheme (the figure names the point), each scheme one colour in both.
  const std::set<std::string> pre = legend_colours(html, "pre"),
                              post = legend_colours(html, "post");
  ASSERT_EQ(pre.size(), 1u);
  ASSERT_EQ(post.size(), 1u);
  EXPECT_NE(*pre.begin(), *post.begin());
  EXPECT_EQ(occurrences(html, ">pre lr=0.1</text>"), 0u);
  // Two seeds: no bands (t = 12.7), and the caption says so.
  EXPECT_EQ(occurrences(html, "<polygon class=\"band\""), 0u);
  EXPECT_NE(html.find("no band below 3 seeds"), std::string::npos);
}

// A study stopped part-way: seed 1 of both schemes ended, seed 2 of pre interrupted at step 15.
struct StoppedStudy {
  TempDir dir;
  fs::path out, file;
};

const StoppedStudy& stopped_study() {
  static const std::unique_ptr<StoppedStudy> study = [] {
    auto s = std::make_unique<StoppedStudy>();
    s->out = s->dir / "stopped";
    s->file = s->dir / "tiny.toml";
    std::ofstream(s->file) << testing::kTinyExperiment;
    const std::vector<std::string> common = {"run",    s->file.string(),
                                             "--set",  "name=\"stopped\"",
                                             "--set",  "train.log_every=5",
                                             "--out",  s->out.string(),
                                             "--jobs", "1"};
    std::vector<std::string> first = common, second = common;
    first.insert(first.end(), {"--set", "seeds=[1]"});
    const auto r1 = run_normlab(first);
    EXPECT_EQ(r1.exit_code, 0) << r1.describe();
    const auto r2 = run_normlab(second, {"NORMLAB_TEST_INTERRUPT_AT_STEP=15"});
    EXPECT_EQ(r2.exit_code, 130) << r2.describe();
    return s;
  }();
  return *study;
}

TEST(StudyFigures, AStudyThatHasNotFinishedShowsItsEndedRunsAndCurvesSoFar) {
  const StoppedStudy& s = stopped_study();
  const std::string html = report_of(s.out);
  EXPECT_NE(html.find("has not finished (it is running, or was stopped): 2 of 4 runs have ended"),
            std::string::npos)
      << html.substr(0, 3000);
  EXPECT_EQ(occurrences(html, "aria-label=\"tvd against length (raw weights)\""), 1u);
  EXPECT_NE(html.find("Summary tables (runs ended so far)"), std::string::npos);
  EXPECT_EQ(occurrences(html, "aria-label=\"training loss against step\""), 1u);
  // The summary table holds the seed-1 runs: one seed per cell, so no interval.
  EXPECT_EQ(html.find("[0."), std::string::npos);
}

TEST(StudyFigures, SeveralFoldersSideBySide) {
  const StoppedStudy& s = stopped_study();
  const testing::TinyStudy& tiny = testing::tiny_study();
  ASSERT_EQ(tiny.run.exit_code, 0) << tiny.run.describe();
  TempDir tmp;
  const fs::path page = tmp / "compare.html";
  const auto r = run_normlab({"report", tiny.out.string(), s.out.string(), "--to", page.string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const std::string html = slurp(page);
  EXPECT_NE(html.find(">Studies</h2>"), std::string::npos) << html.substr(0, 2000);
  EXPECT_NE(html.find("not finished: 2 of 4 runs ended"), std::string::npos);
  EXPECT_EQ(occurrences(html, "aria-label=\"tiny: tvd against length (raw weights)\""), 1u);
  EXPECT_EQ(occurrences(html, "aria-label=\"stopped: tvd against length (raw weights)\""), 1u);
  EXPECT_NE(html.find("Summary tables: tiny"), std::string::npos);
  EXPECT_NE(html.find("Summary tables: stopped (runs ended so far)"), std::string::npos);
  // Each scheme one colour in both studies' figures.
  EXPECT_EQ(legend_colours(html, "pre").size(), 1u);
  EXPECT_EQ(legend_colours(html, "post").size(), 1u);
  // Several folders need --to; a folder of another kind is refused.
  const auto no_to = run_normlab({"report", tiny.out.string(), s.out.string()});
  EXPECT_EQ(no_to.exit_code, 2) << no_to.describe();
  EXPECT_NE(no_to.err.find("--to"), std::string::npos) << no_to.err;
  fs::create_directories(tmp / "ledger");
  std::ofstream(tmp / "ledger" / "claims.md") << "# claims\n";
  const auto ledger =
      run_normlab({"report", tiny.out.string(), (tmp / "ledger").string(), "--to", page.string()});
  EXPECT_EQ(ledger.exit_code, 2) << ledger.describe();
  EXPECT_NE(ledger.err.find("only those can be compared"), std::string::npos) << ledger.err;
}

}  // namespace
}  // namespace normlab
