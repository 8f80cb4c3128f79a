// A mistyped choice is answered with the allowed values and the one most likely meant.
#include <gtest/gtest.h>

#include "normlab/io/nearest_name.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

TEST(NearestName, FoldsCaseSeparatorsAndANormSuffixThenAllowsTwoEdits) {
  const std::vector<std::string> names = {"pre", "post", "peri", "peri_init", "hybridnorm"};
  EXPECT_EQ(nearest_name("prenorm", names), "pre");
  EXPECT_EQ(nearest_name("Post-LN", names), "post");
  EXPECT_EQ(nearest_name("PERI_INIT", names), "peri_init");
  EXPECT_EQ(nearest_name("hybrid", names), "hybridnorm");  // "hybridnorm" folds to "hybrid"
  EXPECT_EQ(nearest_name("peir", names), "peri");          // two edits
  EXPECT_EQ(nearest_name("poset", names), "post");         // one
  EXPECT_EQ(nearest_name("sandwich", names), "");          // nothing near
  EXPECT_EQ(nearest_name("pr", {"pre", "x"}), "pre");
  EXPECT_EQ(nearest_name("x", {"ab"}), "");  // two edits, but no longer than the name itself
}

TEST(DidYouMean, SchemeOptionSuggestsTheNearestScheme) {
  const auto r = testing::run_normlab({"init", "--scheme", "prenorm", "--out", "unused"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find("--scheme: 'prenorm' is not one of pre, post, peri,"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(", custom; did you mean pre?"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace normlab
