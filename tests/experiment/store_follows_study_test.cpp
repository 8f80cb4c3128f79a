// The store is the study: re-run into the same folder with fewer seeds, `normlab results`,
// results.csv and summary.csv count the same runs (issue 41, item 2).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "normlab/io/csv.hpp"
#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

using testing::run_normlab;
using testing::TempDir;

TEST(StoreFollowsStudy, FewerSeedsLeaveTheStoreAndSummaryAgreeing) {
  TempDir dir;
  const std::string file = (dir / "tiny.toml").string();
  std::ofstream(file) << testing::kTinyExperiment;
  const std::string out = (dir / "out").string();
  ASSERT_EQ(run_normlab({"run", file, "--out", out, "--set", "seeds=[1, 2, 3]"}).exit_code, 0);
  const auto r = run_normlab({"run", file, "--out", out, "--set", "seeds=[1, 2]"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.err.find("(0 to do, 4 already done)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("2 run(s) of an earlier version of this study (other seeds or sweep "
                       "points) are no longer in the store; their folders stay in "),
            std::string::npos)
      << r.out;
  const auto seeds = run_normlab({"results", out, "--csv", "--sql",
                                  "SELECT COUNT(DISTINCT seed) AS seeds, COUNT(*) AS rows FROM "
                                  "results"});
  ASSERT_EQ(seeds.exit_code, 0) << seeds.describe();
  const CsvTable results = read_csv_table(std::filesystem::path(out) / "results.csv");
  EXPECT_EQ(seeds.out, "seeds,rows\n2," + std::to_string(results.rows.size()) + "\n");
  const CsvTable summary = read_csv_table(std::filesystem::path(out) / "summary.csv");
  ASSERT_FALSE(summary.rows.empty());
  for (size_t i = 0; i < summary.rows.size(); ++i) EXPECT_EQ(summary.cell(i, "seeds"), "2");
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / "runs" / "pre__seed3"));
}

}  // namespace
}  // namespace normlab
