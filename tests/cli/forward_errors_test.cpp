// Usage errors of `normlab forward` on a valid checkpoint: a token outside the vocabulary, a
// non-numeric, negative, out-of-range or missing token list, rows out of order or beyond the
// sequence. Each exits with 2 (not a signal), prints no logits, and one stderr line naming the
// bad value and what is allowed. And --rows: the listed rows' logits by the inference pass.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
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
  RunResult forward(const std::string& tokens, const std::string& rows = "") {
    std::vector<std::string> args = {"forward", "--checkpoint", dir_.path().string(), "--tokens",
                                     tokens};
    if (!rows.empty()) args.insert(args.end(), {"--rows", rows});
    return testing::run_normlab(args);
  }
  void expect_usage_error(const std::string& tokens, const std::vector<std::string>& keywords,
                          const std::string& rows = "") {
    SCOPED_TRACE("--tokens '" + tokens + "' --rows '" + rows + "'");
    const RunResult r = forward(tokens, rows);
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
  expect_usage_error(" , ", {"--tokens", "no token ids"});
}

// The inference pass computes the listed rows with streaming attention, whose sums run in
// another order than the training pass's: over at most 5 keys and products of width 8, a few
// float roundings (2^-24 each, relative) of values of order 1 per layer. 1e-5 relative is over
// a hundred of them.
TEST_F(ForwardUsage, RowsGiveTheListedRowsByTheInferencePass) {
  const RunResult all = forward("1 2 9 4 0");
  const RunResult listed = forward("1 2 9 4 0", "1,4");
  ASSERT_TRUE(all.exited && all.exit_code == 0) << all.describe();
  ASSERT_TRUE(listed.exited && listed.exit_code == 0) << listed.describe();
  const auto full = nlohmann::json::parse(all.out)["logits"];
  const auto rows = nlohmann::json::parse(listed.out)["logits"];
  ASSERT_EQ(full.size(), 5u);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& [k, t] : {std::pair{0, 1}, std::pair{1, 4}}) {
    ASSERT_EQ(rows[k].size(), 10u);
    for (int v = 0; v < 10; ++v) {
      const double a = rows[k][v], b = full[t][v];
      EXPECT_NEAR(a, b, 1e-5 * (1 + std::abs(b))) << "position " << t << " logit " << v;
    }
  }
}

TEST_F(ForwardUsage, RowsOutOfOrderOrBeyondTheSequence) {
  expect_usage_error("1 2 3", {"--rows", "ascending", "length 3"}, "2 1");
  expect_usage_error("1 2 3", {"--rows", "ascending", "length 3"}, "1 1");
  expect_usage_error("1 2 3", {"--rows", "length 3"}, "3");
  expect_usage_error("1 2 3", {"--rows", "'x'", "position"}, "0 x");
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
