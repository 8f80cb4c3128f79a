// The HTML report (docs/report.md): what `normlab run` writes at its end and `normlab report`
// writes again, for a training study, a particle study and a claims ledger; the refusals.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "normlab/store/results_store.hpp"
#include "report/tiny_study.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::occurrences;
using testing::run_normlab;
using testing::RunResult;
using testing::slurp;
using testing::TempDir;
using testing::tiny_study;

std::string tiny_report() {
  const testing::TinyStudy& s = tiny_study();
  EXPECT_TRUE(s.run.exited && s.run.exit_code == 0) << s.run.describe();
  return slurp(s.out / "report.html");
}

TEST(Report, RunWritesItAndPrintsItsPath) {
  const testing::TinyStudy& s = tiny_study();
  ASSERT_TRUE(s.run.exited && s.run.exit_code == 0) << s.run.describe();
  EXPECT_NE(s.run.out.find("report: " + (s.out / "report.html").string() + "\n"), std::string::npos)
      << s.run.out;
  EXPECT_TRUE(fs::exists(s.out / "report.html"));
}

TEST(Report, HasAFigurePerMetricAndWeightsTheCurvesAndTheDepthProbe) {
  const std::string html = tiny_report();
  for (const std::string title :
       {"accuracy against length (raw weights)", "tvd against length (raw weights)",
        "training loss against step", "validation loss against step",
        "hidden-state RMS against depth (mean over 2 seeds)",
        "mean pairwise token cosine against depth (mean over 2 seeds)",
        "effective rank against depth (mean over 2 seeds)",
        "gradient norm per layer (mean over 2 seeds)",
        "RMS of each block&#39;s output (mean over 2 seeds)"}) {
    EXPECT_EQ(occurrences(html, "aria-label=\"" + title + "\""), 1u) << title;
  }
  EXPECT_EQ(occurrences(html, "<svg class=\"figure\""), 9u);
  // The evaluator's chance row (the uniform predictor's TVD, design rule D1's floor) is a dashed
  // line in the TVD figure, not a figure of its own.
  EXPECT_EQ(occurrences(html, "aria-label=\"tvd_chance against length"), 0u);
  EXPECT_NE(html.find("chance (uniform predictor)"), std::string::npos);
  EXPECT_NE(html.find("grey dots: the uniform predictor (chance)"), std::string::npos);
  // Metric figures: the training lengths 1..3 shaded; two seeds draw no band (t = 12.7).
  EXPECT_GE(occurrences(html, "<rect class=\"shade\""), 2u);
  EXPECT_NE(html.find("training lengths (1 .. 3)"), std::string::npos);
  EXPECT_NE(html.find("no band below 3 seeds"), std::string::npos);
  EXPECT_EQ(occurrences(html, "<polygon class=\"band\""), 0u);
  // The summary table marks lengths beyond training.
  EXPECT_NE(html.find("<th>N=5*</th>"), std::string::npos);
  EXPECT_NE(html.find("<th>N=2</th>"), std::string::npos);
  // The experiment as run and as resolved.
  EXPECT_NE(html.find("experiment.toml (the file as run)"), std::string::npos);
  EXPECT_NE(html.find("experiment.json (the resolved experiment"), std::string::npos);
  EXPECT_NE(html.find("&quot;variants&quot;"), std::string::npos);
}

TEST(Report, ShowsTheStoresProvenance) {
  const std::string html = tiny_report();
  const QueryTable e = query_results_store(tiny_study().out / "results.sqlite",
                                           "SELECT git_commit, host, version FROM experiments");
  ASSERT_EQ(e.rows.size(), 1u);
  const std::string commit = e.rows[0][0].empty() ? "(not recorded)" : e.rows[0][0];
  EXPECT_NE(html.find("<td>" + commit + "</td>"), std::string::npos) << commit;
  EXPECT_NE(html.find("<td>" + e.rows[0][1] + "</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>" + e.rows[0][2] + "</td>"), std::string::npos);
  // One row per run, each finished.
  EXPECT_EQ(occurrences(html, "<td>finished</td>"), 4u);
}

TEST(Report, IsSelfContainedAndShowsFileTextAsText) {
  const std::string html = tiny_report();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_TRUE(html.ends_with("</html>\n"));
  for (const char* external : {"http://", "https://", "<script", "<link", "<img", "<iframe",
                               "<object", "src=", "url(", "@import"}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;"),
            std::string::npos);
  // Every link of the table of contents leads to a heading of the page.
  std::set<std::string> ids;
  const std::regex id_re("id=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), id_re);
       it != std::sregex_iterator(); ++it) {
    ids.insert((*it)[1]);
  }
  const std::regex href_re("href=\"#([^\"]+)\"");
  size_t links = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href_re);
       it != std::sregex_iterator(); ++it, ++links) {
    EXPECT_EQ(ids.count((*it)[1]), 1u) << (*it)[1];
  }
  EXPECT_GE(links, 8u);
}

TEST(ReportCommand, WritesTheReportAgain) {
  TempDir tmp;
  const fs::path copy = tmp / "copy";
  fs::copy(tiny_study().out, copy, fs::copy_options::recursive);
  fs::remove(copy / "report.html");
  const RunResult r = run_normlab({"report", copy.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_EQ(r.out, "wrote " + (copy / "report.html").string() + "\n");
  EXPECT_EQ(occurrences(slurp(copy / "report.html"), "<svg class=\"figure\""), 9u);
}

TEST(ReportCommand, RefusesWhatIsNotAResultsFolder) {
  TempDir tmp;
  RunResult r = run_normlab({"report", (tmp / "missing").string()});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("missing: no such folder"), std::string::npos) << r.err;

  testing::write_bytes(tmp / "file.txt", "x");
  r = run_normlab({"report", (tmp / "file.txt").string()});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find("file.txt: not a folder"), std::string::npos) << r.err;

  fs::create_directories(tmp / "empty");
  r = run_normlab({"report", (tmp / "empty").string()});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("empty: not a results folder"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "empty" / "report.html"));

  testing::write_bytes(tmp / "other" / "experiment.json", "{\"name\": \"x\"}");
  r = run_normlab({"report", (tmp / "other").string()});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("experiment.json: not the experiment.json of a kind = \"train\""),
            std::string::npos)
      << r.err;

  // A results folder with a broken file: named.
  const fs::path broken = tmp / "broken";
  fs::copy(tiny_study().out, broken, fs::copy_options::recursive);
  testing::write_bytes(broken / "summary.csv", "variant,weights,metric\npre,raw\n");
  r = run_normlab({"report", broken.string()});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("summary.csv:2: 2 cells, the header has 3"), std::string::npos) << r.err;
}

TEST(ReportCommand, ClaimsLedgerFolderShowsItsTextAsText) {
  TempDir tmp;
  testing::write_bytes(tmp / "claims.json", R"j({"tier": "quick",
    "claims": [{"id": "x.<i>y</i>", "paper": "2510.0", "sentence": "<script>alert(2)</script>",
                "verdict": "reproduced", "effect": -0.5, "low": -0.7, "high": -0.3, "n": 3},
               {"id": "x.z", "paper": "2510.0", "sentence": "s", "verdict": "untestable (ceiling)",
                "effect": 0.01, "low": 0.0, "high": 0.02, "n": 3,
                "informativeness": {"metric": "roc_auc", "informative": 0, "lengths": [
                  {"length": 64, "baseline_mean": 0.995, "floor": 0.5, "ceiling": 1,
                   "margin": 0.01, "place": "ceiling"}]}}],
    "studies": [{"command": "normlab run a.toml", "seconds": 1.5, "ok": true, "failure": ""}]})j");
  testing::write_bytes(tmp / "claims.md", "# ledger\n<img src=x onerror=alert(3)>\n");
  const RunResult r = run_normlab({"report", tmp.path().string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  const std::string html = slurp(tmp / "report.html");
  for (const char* raw : {"<script", "<img", "<i>"})
    EXPECT_EQ(html.find(raw), std::string::npos) << raw;
  EXPECT_NE(html.find("<td>&lt;script&gt;alert(2)&lt;/script&gt;</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>x.&lt;i&gt;y&lt;/i&gt;</td>"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(3)&gt;"), std::string::npos);
  EXPECT_NE(html.find("<td>-0.5 [-0.7, -0.3]</td>"), std::string::npos);
  EXPECT_NE(html.find("2 claims, 1 reproduced, 1 untestable (ceiling)"), std::string::npos);
  // Design rule D1's table: the claim, its verdict, n, m(n), f, c and the place.
  EXPECT_NE(html.find("Informativeness (design rule D1)"), std::string::npos);
  EXPECT_NE(html.find("<td>x.z</td><td>untestable (ceiling)</td><td>64</td><td>0.995</td>"
                      "<td>0.5</td><td>1</td><td>ceiling</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>normlab run a.toml</td>"), std::string::npos);
}

}  // namespace
}  // namespace normlab
