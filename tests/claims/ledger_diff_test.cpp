// Two ledgers side by side (claims/ledger_diff.hpp) on hand-written claims.json: each kind of
// move, the order of the rows, the table, and the command's refusals.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/claims/ledger_diff.hpp"
#include "support/cli.hpp"

namespace normlab::claims {
namespace {

using testing::run_normlab;
using testing::TempDir;

// One claims.json entry; a negative n writes the null effect of a claim without pairs.
nlohmann::json entry(const std::string& id, const std::string& verdict, double effect, int n) {
  const bool have = n > 0;
  return {{"id", id},
          {"paper", "2510.08341"},
          {"verdict", verdict},
          {"effect", have ? nlohmann::json(effect) : nlohmann::json()},
          {"low", have ? nlohmann::json(effect - 0.1) : nlohmann::json()},
          {"high", have ? nlohmann::json(effect + 0.1) : nlohmann::json()},
          {"n", have ? n : 0}};
}

nlohmann::json ledger(std::vector<nlohmann::json> claims) {
  return {{"tier", "full"}, {"claims", claims}};
}

TEST(LedgerDiff, EachKindOfMove) {
  const nlohmann::json before =
      ledger({entry("same", "reproduced", 0.5, 5), entry("verdict", "inconclusive", 0.05, 5),
              entry("effect", "reproduced", 0.5, 5), entry("seeds", "reproduced", 0.5, 5),
              entry("gone", "contradicted", -0.3, 5), entry("ran", "not run", 0, -1)});
  const nlohmann::json after =
      ledger({entry("new", "reproduced", 0.2, 10), entry("same", "reproduced", 0.5, 5),
              entry("verdict", "reproduced", 0.3, 10), entry("effect", "reproduced", 0.6, 5),
              entry("seeds", "reproduced", 0.5, 10), entry("ran", "inconclusive", 0.01, 10)});
  const std::vector<ClaimChange> d = diff_ledgers(before, after, "a", "b");
  ASSERT_EQ(d.size(), 7u);
  // The second ledger's order, then what only the first has.
  const std::vector<std::pair<std::string, Moved>> expected = {
      {"new", Moved::added},     {"same", Moved::none},    {"verdict", Moved::verdict},
      {"effect", Moved::effect}, {"seeds", Moved::effect}, {"ran", Moved::verdict},
      {"gone", Moved::removed}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(d[i].id, expected[i].first) << i;
    EXPECT_EQ(d[i].moved, expected[i].second) << d[i].id;
  }
  EXPECT_FALSE(d[0].before.has_value());
  EXPECT_FALSE(d[6].after.has_value());
  EXPECT_EQ(d[5].before->effect, "–");  // a claim without pairs has no effect, not a zero
  EXPECT_EQ(d[2].after->effect, "0.3 [0.2, 0.4]");

  const std::string md = diff_markdown(d);
  EXPECT_NE(md.find("7 claims: 2 with another verdict, 2 with the same verdict and another "
                    "effect, 1 added, 1 removed, 1 unchanged"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| verdict | 2510.08341 | inconclusive, 0.05 [-0.05, 0.15] (n 5) | "
                    "reproduced, 0.3 [0.2, 0.4] (n 10) | verdict |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| gone | 2510.08341 | contradicted, -0.3 [-0.4, -0.2] (n 5) | – | removed |"),
            std::string::npos)
      << md;
}

TEST(LedgerDiff, NotALedgerIsNamed) {
  const nlohmann::json bad = {{"claims", {{{"id", "x"}}}}};  // no paper, no verdict
  try {
    diff_ledgers(ledger({}), bad, "before.json", "after.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("after.json: not a claims ledger"), std::string::npos)
        << e.what();
  }
}

TEST(LedgerDiff, CommandReadsFilesOrFolders) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "old");
  std::ofstream(tmp / "old" / "claims.json") << ledger({entry("c", "inconclusive", 0.1, 5)});
  std::ofstream(tmp / "new.json") << ledger({entry("c", "reproduced", 0.4, 10)});
  const auto r =
      run_normlab({"claims", "diff", (tmp / "old").string(), (tmp / "new.json").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("| c | 2510.08341 | inconclusive, 0.1 [0, 0.2] (n 5) | reproduced, 0.4 "
                       "[0.3, 0.5] (n 10) | verdict |"),
            std::string::npos)
      << r.out;
  const auto missing =
      run_normlab({"claims", "diff", (tmp / "nowhere").string(), (tmp / "new.json").string()});
  EXPECT_TRUE(missing.exited && missing.exit_code == 1) << missing.describe();
  EXPECT_NE(missing.err.find("nowhere: no such file"), std::string::npos)
      << missing.err;
}

}  // namespace
}  // namespace normlab::claims
