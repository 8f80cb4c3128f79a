// The length probes of experiment files ([probe] variance and dilution): strict keys with the
// file, the line and the key, and a tiny study whose aggregated files have the fixed columns
// and numbers that follow from the per-run probe files by the documented formulas.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <toml++/toml.h>

#include "normlab/errors.hpp"
#include "normlab/experiment.hpp"
#include "normlab/task.hpp"
#include "normlab/toml_reader.hpp"
#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

using testing::run_normlab;
using testing::TempDir;

const char* kStudy = R"toml(name = "tiny_probes"
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

// Reads `text`; returns the error without the file name, or "" if valid.
std::string read_error(const std::string& text, Experiment* out = nullptr) {
  return testing::experiment_error(text, out);
}

TEST(ExperimentProbeKeys, ErrorsNameFileLineAndKey) {
  const std::string base = std::string(kStudy) + "\n[probe]\n";
  const int probe_line = lines_of(base);  // the line of [probe]
  std::string err = read_error(base + "variance = true\nlengths = [2, 9]\n");
  EXPECT_EQ(err.rfind(fmt::format(":{}: lengths: task set_complement", probe_line + 2), 0), 0u)
      << err;
  EXPECT_NE(err.find("length 9 is outside"), std::string::npos) << err;

  err = read_error(base + "lengths = [2, 4]\n");
  EXPECT_EQ(err, fmt::format(":{}: lengths apply to variance = true only", probe_line + 1));

  err = read_error(base + "variance = true\nsamples = 1\n");
  EXPECT_EQ(err.rfind(fmt::format(":{}: samples must be at least 2", probe_line + 2), 0), 0u)
      << err;

  err = read_error(base + "varaince = true\n");
  EXPECT_NE(err.find(fmt::format(":{}: unknown key 'varaince' in [probe]", probe_line + 1)),
            std::string::npos)
      << err;

  std::string other = base + "dilution = true\n";
  other.replace(other.find("name = \"set_complement\"\nv = 6"), 29,
                "name = \"max_retrieval\"\nlevels = 6");
  err = read_error(other);
  EXPECT_EQ(
      err.rfind(fmt::format(":{}: dilution applies to set_complement only", probe_line + 1), 0), 0u)
      << err;

  // Defaults: the task's powers of two and its longest length; 2^14 where the task allows it.
  Experiment e;
  ASSERT_EQ(read_error(base + "variance = true\ndilution = true\n", &e), "");
  EXPECT_EQ(e.probe_lengths, (std::vector<int64_t>{1, 2, 4, 5}));
  EXPECT_EQ(e.probe_samples, 256);
  EXPECT_TRUE(e.probe_dilution);
  auto retrieval = make_task_from_json({{"name", "argmax_retrieval"}});
  const std::vector<int64_t> lengths = default_probe_lengths(*retrieval);
  EXPECT_EQ(lengths.front(), 1);
  EXPECT_EQ(lengths.back(), 16384);
  EXPECT_EQ(lengths.size(), 15u);
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == ',') {
      out.emplace_back();
    } else {
      out.back().push_back(c);
    }
  }
  return out;
}

// Header and rows of a CSV file.
std::pair<std::string, std::vector<std::vector<std::string>>> read_rows(
    const std::filesystem::path& file) {
  std::istringstream in(testing::slurp(file));
  std::string header, line;
  std::getline(in, header);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) rows.push_back(cells(line));
  return {header, rows};
}

TEST(ExperimentProbeReports, FeaturesAndDilutionOverEveryRun) {
  TempDir tmp;
  std::ofstream(tmp / "p.toml") << std::string(kStudy)
                                << "\n[probe]\nvariance = true\nsamples = 16\ndilution = true\n";
  const auto out = tmp / "results";
  const auto r = run_normlab({"run", (tmp / "p.toml").string(), "--out", out.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.err.find("variance probe: peri seed 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dilution probe: pre seed 1"), std::string::npos) << r.err;

  const auto [fheader, features] = read_rows(out / "features.csv");
  EXPECT_EQ(fheader,
            "variant,seed,layer,site,length,seq_len,rows,mean_feature_std,global_mean,global_var,"
            "global_std");
  // (variant, layer, site) → length → (global_mean, global_std)
  std::map<std::string, std::map<int, std::pair<double, double>>> by_site;
  for (const auto& c : features) {
    ASSERT_EQ(c.size(), 11u);
    EXPECT_NE(c[3], "head");
    by_site[c[0] + "|" + c[2] + "|" + c[3]][std::stoi(c[4])] = {std::stod(c[8]), std::stod(c[10])};
  }
  EXPECT_EQ(by_site.size(), 2u + 3u);  // pre: attn_out, stream_out; peri also attn_out_normed
  const auto [header, fits] = read_rows(out / "features_fit.csv");
  EXPECT_EQ(header, "variant,seed,layer,site,slope,slope_low,slope_high,mean_drift");
  ASSERT_EQ(fits.size(), 5u);
  for (const auto& c : fits) {
    ASSERT_EQ(c.size(), 8u);
    const auto& per_length = by_site.at(c[0] + "|" + c[2] + "|" + c[3]);
    ASSERT_EQ(per_length.size(), 4u);  // N = 1, 2, 4, 5
    const auto [m_short, s_short] = per_length.at(1);
    const auto [m_long, s_long] = per_length.at(5);
    const double drift = std::abs(m_long - m_short) / s_short;
    EXPECT_NEAR(std::stod(c[7]), drift, 1e-4 * drift + 1e-9) << c[0] << " " << c[3];
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
    EXPECT_NEAR(std::stod(c[4]), slope, 1e-4) << c[0] << " " << c[3];
    EXPECT_LE(std::stod(c[5]), std::stod(c[4]));
    EXPECT_GE(std::stod(c[6]), std::stod(c[4]));
  }

  const auto [dheader, gaps] = read_rows(out / "dilution.csv");
  EXPECT_EQ(dheader, "variant,seed,site,s,gap,gap_low,gap_high");
  EXPECT_EQ(gaps.size(), (2u + 3u) * 5u);  // sites × s = 1..5
  const auto [dfheader, dfits] = read_rows(out / "dilution_fit.csv");
  EXPECT_EQ(dfheader, "variant,seed,site,slope,slope_low,slope_high");
  ASSERT_EQ(dfits.size(), 5u);
  EXPECT_EQ(dfits[2][0], "peri");
  EXPECT_EQ(dfits[2][2], "logits");
  EXPECT_EQ(dfits[4][2], "branch_normed");

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
