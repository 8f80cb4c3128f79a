// A particle study (kind = "particles") that finished in an earlier ledger run keeps only its
// tables; a ledger with an empty OUT (another machine) uses them when their summary.json holds
// the runs the study file would integrate now (docs/claims.md, "Keeping the tables").
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::run_normlab;
using testing::TempDir;

// Two symmetric-init runs of eight particles, a fraction of a second each; `beta` can change.
std::string tiny_particle_study(const std::string& beta) {
  return R"(kind = "particles"
runs = ["post", "pre"]
[defaults]
init = "symmetric"
n = 8
d = 8
beta = )" +
         beta +
         R"(
dt = 0.05
record_every = 0.5
[run.post]
t_end = 6.0
[run.pre]
t_end = 12.0
)";
}

TEST(ClaimsRun, FinishedParticleStudyIsReusedFromItsKeptTables) {
  TempDir tmp;
  const fs::path study = tmp / "tiny_particles.toml";
  testing::write_bytes(study, tiny_particle_study("2.0"));
  testing::write_bytes(tmp / "claims" / "tiny.toml", R"(paper = "0000.00011"
[[claim]]
id = "tiny.post_rate"
sentence = "s"
study = ")" + study.string() + R"("
source = "particles_summary.csv"
terms = [{ weight = 1.0, filter = { scheme = "post" }, value = "exp_rate" }]
expect = { band = [0.0, 100.0] }
deterministic = true
)");
  const fs::path tables = tmp / "tables";
  const auto ledger = [&](const std::string& out, bool dry = false) {
    std::vector<std::string> args = {"claims",   "run",
                                     "--claims", (tmp / "claims").string(),
                                     "--out",    (tmp / out).string(),
                                     "--tables", tables.string()};
    if (dry) args.push_back("--dry-run");
    return run_normlab(args);
  };
  const std::string integrates = "] post: n 8, d 8";  // the study's line as a run starts
  const std::string reused = "study tiny_particles: finished in an earlier ledger run";

  auto r = ledger("first");
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.err.find(integrates), std::string::npos) << r.err;
  const fs::path kept = tables / "tiny_particles";
  const auto summary = nlohmann::json::parse(testing::slurp(kept / "summary.json"));
  ASSERT_EQ(summary["runs"].size(), 2u);
  EXPECT_NE(summary["runs"][0]["key"].get<std::string>().find("beta = 2"), std::string::npos)
      << summary["runs"][0];
  const auto first = nlohmann::json::parse(testing::slurp(tmp / "first" / "claims.json"));

  // An empty OUT: the kept tables are the study's, nothing is integrated, the same verdict.
  r = ledger("second", true);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("finished in an earlier ledger run: its kept tables are used"),
            std::string::npos)
      << r.out;
  r = ledger("second");
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find(reused), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find(integrates), std::string::npos) << r.err;
  const auto second = nlohmann::json::parse(testing::slurp(tmp / "second" / "claims.json"));
  EXPECT_EQ(second["claims"][0]["verdict"], first["claims"][0]["verdict"]);
  EXPECT_EQ(second["claims"][0]["effect"], first["claims"][0]["effect"]);

  // A summary.json without the runs' keys (an older normlab's) does not say what ran: it runs.
  auto older = summary;
  for (nlohmann::json& run : older["runs"]) ASSERT_EQ(run.erase("key"), 1u);
  testing::write_bytes(kept / "summary.json", older.dump(2));
  r = ledger("third");
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_EQ(r.out.find(reused), std::string::npos) << r.out;
  EXPECT_NE(r.err.find(integrates), std::string::npos) << r.err;

  // The study file changed (another beta): its kept tables are not that study's.
  testing::write_bytes(study, tiny_particle_study("3.0"));
  r = ledger("fourth", true);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_EQ(r.out.find("kept tables are used"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not a training study: no estimate"), std::string::npos) << r.out;
  r = ledger("fourth");
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_EQ(r.out.find(reused), std::string::npos) << r.out;
  EXPECT_NE(r.err.find(integrates), std::string::npos) << r.err;
}

}  // namespace
}  // namespace normlab
