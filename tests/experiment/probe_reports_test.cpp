// The length probes of experiment files ([probe] variance and dilution): strict keys with the
// file, the line and the key, and a tiny study whose aggregated files have the fixed columns
// and numbers that follow from the per-run probe files by the documented formulas.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <toml++/toml.h>

#include "normlab/base/errors.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/tasks/task.hpp"
#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

using testing::experiment_error;
using testing::run_normlab;
using testing::TempDir;

const char* kProbeStudy = R"toml(name = "tiny_probes"
schemes = ["pre", "peri"]
seeds = [1]

[task]
name = "set_complement"
v = 6

[model]
width = 8
layers = 1
mlp = false
final_norm = "off"

[train]
steps = 30
batch = 8
lengths = [1, 3]
checkpoint_every = 30

[eval]
lengths = [2]
samples = 16
)toml";

int lines_of(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(ExperimentProbeKeys, ErrorsNameFileLineAndKey) {
  const std::string base = std::string(kProbeStudy) + "\n[probe]\n";
  const int probe_line = lines_of(base);  // the line of [probe]
  std::string err = experiment_error(base + "variance = true\nlengths = [2, 9]\n");
  EXPECT_EQ(err.rfind(fmt::format(":{}: lengths: task set_complement", probe_line + 2), 0), 0u)
      << err;
  EXPECT_NE(err.find("length 9 is outside"), std::string::npos) << err;

  err = experiment_error(base + "lengths = [2, 4]\n");
  EXPECT_EQ(err, fmt::format(":{}: lengths apply to variance = true only", probe_line + 1));

  err = experiment_error(base + "variance = true\nsamples = 1\n");
  EXPECT_EQ(err.rfind(fmt::format(":{}: samples must be at least 2", probe_line + 2), 0), 0u)
      << err;

  err = experiment_error(base + "varaince = true\n");
  EXPECT_NE(err.find(fmt::format(":{}: unknown key 'varaince' in [probe]", probe_line + 1)),
            std::string::npos)
      << err;

  std::string other = base + "dilution = true\n";
  other.replace(other.find("name = \"set_complement\"\nv = 6"), 29,
                "name = \"max_retrieval\"\nlevels = 6");
  err = experiment_error(other);
  EXPECT_EQ(
      err.rfind(fmt::format(":{}: dilution applies to set_complement only", probe_line + 1), 0), 0u)
      << err;

  // Defaults: the task's powers of two and its longest length; 2^14 where the task allows it.
  Experiment e;
  ASSERT_EQ(experiment_error(base + "variance = true\ndilution = true\n", &e), "");
  EXPECT_EQ(e.probe_lengths, (std::vector<int64_t>{1, 2, 4, 5}));
  EXPECT_EQ(e.probe_samples, 256);
  EXPECT_TRUE(e.probe_dilution);
  auto retrieval = make_task_from_json({{"name", "argmax_retrieval"}});
  const std::vector<int64_t> lengths = default_probe_lengths(*retrieval);
  EXPECT_EQ(lengths.front(), 1);
  EXPECT_EQ(lengths.back(), 16384);
  EXPECT_EQ(lengths.size(), 15u);
}

TEST(ExperimentProbeReports, FeaturesAndDilutionOverEveryRun) {
  TempDir tmp;
  std::ofstream(tmp / "p.toml") << std::string(kProbeStudy)
                                << "\n[probe]\nvariance = true\nsamples = 16\ndilution = true\n";
  const auto out = tmp / "results";
  const auto r = run_normlab({"run", (tmp / "p.toml").string(), "--out", out.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.err.find("variance probe: peri seed 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dilution probe: pre seed 1"), std::string::npos) << r.err;
  // Each run is probed as it ends, before its rows go into the store: after the first run the
  // store holds every probe file of both runs (variance: its table, fit and histograms;
  // dilution: its table and fit), as each run folder does.
  size_t probe_files = 0;
  for (const auto& run : std::filesystem::directory_iterator(out / "runs")) {
    for (const auto& f : std::filesystem::directory_iterator(run.path())) {
      probe_files += f.path().filename().string().rfind("probe_", 0) == 0;
    }
  }
  EXPECT_GE(probe_files, 2u * 3u);
  const auto stored =
      run_normlab({"results", out.string(), "--csv", "--sql", "SELECT COUNT(*) AS n FROM probes"});
  ASSERT_EQ(stored.exit_code, 0) << stored.describe();
  EXPECT_EQ(stored.out, "n\n" + std::to_string(probe_files) + "\n");

  const CsvTable features = read_csv_table(out / "features.csv");
  EXPECT_EQ(csv_row(features.columns),
            "variant,seed,layer,site,length,seq_len,rows,mean_feature_std,global_mean,global_var,"
            "global_std\n");
  // "variant|layer|site" of row i of a table with those columns
  const auto site_of = [](const CsvTable& t, size_t i) {
    return t.cell(i, "variant") + "|" + t.cell(i, "layer") + "|" + t.cell(i, "site");
  };
  // (variant, layer, site) → length → (global_mean, global_std)
  std::map<std::string, std::map<int, std::pair<double, double>>> by_site;
  for (size_t i = 0; i < features.rows.size(); ++i) {
    EXPECT_NE(features.cell(i, "site"), "head");
    by_site[site_of(features, i)][std::stoi(features.cell(i, "length"))] = {
        std::stod(features.cell(i, "global_mean")), std::stod(features.cell(i, "global_std"))};
  }
  EXPECT_EQ(by_site.size(), 2u + 3u);  // pre: attn_out, stream_out; peri also attn_out_normed
  const CsvTable fits = read_csv_table(out / "features_fit.csv");
  EXPECT_EQ(csv_row(fits.columns),
            "variant,seed,layer,site,slope,slope_low,slope_high,mean_drift\n");
  ASSERT_EQ(fits.rows.size(), 5u);
  for (size_t i = 0; i < fits.rows.size(); ++i) {
    const auto& per_length = by_site.at(site_of(fits, i));
    ASSERT_EQ(per_length.size(), 4u);  // N = 1, 2, 4, 5
    const auto [m_short, s_short] = per_length.at(1);
    const auto [m_long, s_long] = per_length.at(5);
    const double drift = std::abs(m_long - m_short) / s_short;
    EXPECT_NEAR(std::stod(fits.cell(i, "mean_drift")), drift, 1e-4 * drift + 1e-9)
        << site_of(fits, i);
    // Least squares of ln global_std on ln N by hand.
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& [n, ms] : per_length) {
      const double x = std::log(double(n)), y = std::log(ms.second);
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    const double slope = (4 * sxy - sx * sy) / (4 * sxx - sx * sx);
    const double fitted = std::stod(fits.cell(i, "slope"));
    EXPECT_NEAR(fitted, slope, 1e-4) << site_of(fits, i);
    EXPECT_LE(std::stod(fits.cell(i, "slope_low")), fitted);
    EXPECT_GE(std::stod(fits.cell(i, "slope_high")), fitted);
  }

  const CsvTable gaps = read_csv_table(out / "dilution.csv");
  EXPECT_EQ(csv_row(gaps.columns), "variant,seed,site,s,gap,gap_low,gap_high\n");
  EXPECT_EQ(gaps.rows.size(), (2u + 3u) * 5u);  // sites × s = 1..5
  const CsvTable dfits = read_csv_table(out / "dilution_fit.csv");
  EXPECT_EQ(csv_row(dfits.columns), "variant,seed,site,slope,slope_low,slope_high\n");
  ASSERT_EQ(dfits.rows.size(), 5u);
  EXPECT_EQ(dfits.cell(2, "variant"), "peri");
  EXPECT_EQ(dfits.cell(2, "site"), "logits");
  EXPECT_EQ(dfits.cell(4, "site"), "branch_normed");

  const std::string md = testing::slurp(out / "summary.md");
  EXPECT_NE(md.find("**variance probe**"), std::string::npos) << md;
  EXPECT_NE(md.find("**dilution probe**"), std::string::npos) << md;
  if (std::system("command -v gnuplot > /dev/null 2>&1") == 0) {
    for (const char* png :
         {"features_std.png", "features_mean.png", "features_hist.png", "dilution.png"}) {
      EXPECT_GT(std::filesystem::file_size(out / png), 1000u) << png;
    }
  }
  // Probed runs are not probed again.
  const auto again = run_normlab({"run", (tmp / "p.toml").string(), "--out", out.string()});
  ASSERT_TRUE(again.exited && again.exit_code == 0) << again.describe();
  EXPECT_EQ(again.err.find("probe:"), std::string::npos) << again.err;
}

}  // namespace
}  // namespace normlab
