// `normlab schemes` prints every row of the scheme table with its placement preset, and a
// preset it prints, given back as a custom placement, builds the same model as the scheme.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/model/scheme_table.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::RunResult;

TEST(SchemesCommand, ListsEveryRowWithItsPreset) {
  const RunResult r = testing::run_normlab({"schemes", "--layers", "4", "--mix-layers", "3"});
  ASSERT_TRUE(r.exited) << r.describe();
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  for (const SchemeRow& row : scheme_table()) {
    EXPECT_NE(("\n" + r.out).find("\n" + std::string(row.name)), std::string::npos)
        << row.name << "\n"
        << r.out;
  }
  EXPECT_NE(r.out.find("placement: all: in; all[0:3]: post"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("placement: all: post, residual=1.681792830507429"), std::string::npos)
      << r.out;  // deepnorm: (2·4)^(1/4)
  EXPECT_NE(r.out.find("placement: all: in, branch=vector(0.1)"), std::string::npos) << r.out;
}

TEST(SchemesCommand, PrintedPresetRebuildsTheSchemeAsCustom) {
  const testing::TempDir dir;
  const std::string named = (dir.path() / "named").string();
  const std::string custom = (dir.path() / "custom").string();
  const RunResult a = testing::run_normlab(
      {"init", "--scheme", "layerscale", "--layers", "3", "--seed", "4", "--out", named});
  const RunResult b = testing::run_normlab(
      {"init", "--scheme", "custom", "--layers", "3", "--seed", "4", "--placement",
       "all: in, branch=vector(0.1); final: on", "--out", custom});
  ASSERT_EQ(a.exit_code, 0) << a.describe();
  ASSERT_EQ(b.exit_code, 0) << b.describe();
  EXPECT_NE(b.out.find("scheme custom[all: in, branch=vector(0.1); final: on]"), std::string::npos)
      << b.out;
  const auto x = load_checkpoint(named), y = load_checkpoint(custom);
  EXPECT_EQ(x->config().scheme, Scheme::layerscale);
  EXPECT_EQ(y->config().scheme, Scheme::custom);
  EXPECT_EQ(x->params(), y->params());  // the same tensors drawn in the same order
}

TEST(SchemesCommand, BadPlacementOnTheCommandLineSaysWhatIsAllowed) {
  const RunResult r = testing::run_normlab(
      {"init", "--placement", "attn[0:9]: post", "--out", "/tmp/normlab_never_written"});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find("not inside the model's 2 layers"), std::string::npos) << r.describe();
  EXPECT_FALSE(std::filesystem::exists("/tmp/normlab_never_written"));
}

}  // namespace
}  // namespace normlab
