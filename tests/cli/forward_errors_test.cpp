// Usage errors of `normlab forward` on a valid checkpoint: a token outside the vocabulary, a
// non-numeric, negative, out-of-range or missing token list. Each exits with 2 (not a signal),
// prints no logits, and one stderr line naming the bad token and what is allowed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "normlab/checkpoint.hpp"
#include "normlab/model.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::RunResult;
using testing::TempDir;

class ForwardUsage : public ::testing::Test {
 protected:
  void SetUp() override {
    ModelConfig c;
    c.vocab = 10;
    c.width = 8;
    c.layers = 1;
    Model<float> m(c);
    m.init(1);
    save_checkpoint(dir_.path(), m);
  }
  RunResult forward(const std::string& tokens) {
    return testing::run_normlab(
        {"forward", "--checkpoint", dir_.path().string(), "--tokens", tokens});
  }
  void expect_usage_error(const std::string& tokens, const std::vector<std::string>& keywords) {
    SCOPED_TRACE("--tokens '" + tokens + "'");
    const RunResult r = forward(tokens);
    ASSERT_TRUE(r.exited) << r.describe();
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    EXPECT_EQ(r.out, "") << r.describe();
    ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
    for (const std::string& k : keywords) {
      EXPECT_NE(r.err.find(k), std::string::npos) << "message lacks '" << k << "'\n"
                                                  << r.describe();
    }
  }
  TempDir dir_;
};

TEST_F(ForwardUsage, ValidTokensGiveOneRowOfLogitsPerToken) {
  const RunResult r = forward("1 2,9");
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_EQ(r.err, "");
  // {"logits":[[10 values],[10 values],[10 values]]}
  size_t rows = 0;
  for (size_t i = r.out.find("[["); i != std::string::npos; i = r.out.find('[', i + 1)) ++rows;
  EXPECT_EQ(rows, 4u) << r.out;  // the outer list and three rows
}

TEST_F(ForwardUsage, TokenOutsideTheVocabulary) {
  expect_usage_error("1 10", {"token 10", "position 1", "outside the vocabulary", "[0, 10)"});
}

TEST_F(ForwardUsage, NonNumericToken) {
  expect_usage_error("1 two 3", {"--tokens", "'two'", "non-negative integer"});
}

TEST_F(ForwardUsage, NegativeToken) {
  expect_usage_error("-1", {"--tokens", "'-1'", "non-negative integer"});
}

TEST_F(ForwardUsage, TokenBeyondInt32) {
  expect_usage_error("99999999999", {"--tokens", "'99999999999'"});
}

TEST_F(ForwardUsage, EmptyTokenList) {
  expect_usage_error(" , ", {"--tokens", "no tokens"});
}

TEST_F(ForwardUsage, MissingTokensOption) {
  const RunResult r = testing::run_normlab({"forward", "--checkpoint", dir_.path().string()});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
  EXPECT_NE(r.err.find("--tokens is required"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("normlab forward --help"), std::string::npos) << r.describe();
}

}  // namespace
}  // namespace normlab
