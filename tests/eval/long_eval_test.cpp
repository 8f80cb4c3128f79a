// Evaluation at long lengths keeps O(N·D) memory: argmax retrieval at N = 65536 through
// `normlab eval` stays under 500 MB of peak resident memory.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::run_normlab;
using testing::TempDir;

TEST(LongEvaluation, ArgmaxRetrievalAt65536TokensStaysUnder500MB) {
  TempDir tmp;
  const auto ckpt = (tmp / "ckpt").string();
  ASSERT_EQ(run_normlab({"init", "--scheme", "post_attn", "--norm", "layernorm", "--vocab", "33",
                         "--width", "64", "--heads", "1", "--layers", "1", "--out", ckpt})
                .exit_code,
            0);
  const auto r =
      run_normlab({"eval", "--checkpoint", ckpt, "--task", "argmax_retrieval", "--lengths", "65536",
                   "--samples", "2", "--out", (tmp / "eval").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("65536"), std::string::npos) << r.out;
  rusage usage{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &usage), 0);
  const double peak_mb = usage.ru_maxrss / 1024.0;  // ru_maxrss is in kilobytes on Linux
  RecordProperty("peak_mb", std::to_string(peak_mb));
  EXPECT_LT(peak_mb, 500.0);
  EXPECT_GT(peak_mb, 1.0);  // the measurement saw the child
}

}  // namespace
}  // namespace normlab
