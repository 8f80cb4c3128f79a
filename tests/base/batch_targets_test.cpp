// Batch's sparse targets (include/normlab/base/batch.hpp): entries stored ascending whatever order
// they are given in, one-hot and uniform targets and their weights, lookups, the token of
// largest probability, replacing a row's target, the dense view, and invalid tokens rejected.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "normlab/base/batch.hpp"

namespace normlab {
namespace {

Batch empty_batch() {
  Batch b;
  b.resize(2, 3, 7);  // rows 0..5, V = 7
  return b;
}

TEST(BatchTargets, EntriesAreStoredAscendingInCompressedRows) {
  Batch b = empty_batch();
  const std::vector<int32_t> tokens = {5, 1, 3};
  const std::vector<float> probs = {0.5f, 0.2f, 0.3f};
  b.set_target(4, tokens.data(), probs.data(), 3);
  b.set_one_hot(1, 6);
  EXPECT_EQ(b.target_slot, (std::vector<int32_t>{-1, 1, -1, -1, 0, -1}));
  EXPECT_EQ(b.target_offsets, (std::vector<int64_t>{0, 3, 4}));
  EXPECT_EQ(b.target_tokens, (std::vector<int32_t>{1, 3, 5, 6}));
  EXPECT_EQ(b.target_probs, (std::vector<float>{0.2f, 0.3f, 0.5f, 1.0f}));
  EXPECT_EQ(b.weight, (std::vector<float>{0, 1, 0, 0, 0, 0}));  // set_target leaves it
  EXPECT_EQ(b.target_count(), 2);
}

TEST(BatchTargets, LookupsAndTheDenseView) {
  Batch b = empty_batch();
  const std::vector<int32_t> set = {4, 0, 2};
  b.set_uniform(2, set.data(), 3);
  EXPECT_EQ(b.weight[2], 1.0f);
  EXPECT_EQ(b.target_value(2, 4), 1.0f / 3.0f);
  EXPECT_EQ(b.target_value(2, 3), 0.0f);
  EXPECT_EQ(b.target_value(0, 4), 0.0f);    // no target
  EXPECT_EQ(b.target(2).most_likely(), 0);  // a tie goes to the lowest token
  EXPECT_EQ(b.target(0).size, 0);
  EXPECT_EQ(b.target(0).most_likely(), kNoToken);
  const float p = 1.0f / 3.0f;
  EXPECT_EQ(b.dense_target_row(2), (std::vector<float>{p, 0, p, 0, p, 0, 0}));
  const std::vector<float> dense = b.dense_target();
  ASSERT_EQ(dense.size(), 6u * 7u);
  for (int64_t n = 0; n < 6; ++n) {
    for (int v = 0; v < 7; ++v) EXPECT_EQ(dense[n * 7 + v], b.target_value(n, v)) << n << " " << v;
  }
}

TEST(BatchTargets, TheLargestProbabilityIsTheMostLikelyToken) {
  Batch b = empty_batch();
  const std::vector<int32_t> tokens = {2, 6, 4};
  const std::vector<float> probs = {0.25f, 0.5f, 0.25f};
  b.set_target(0, tokens.data(), probs.data(), 3);
  EXPECT_EQ(b.target(0).most_likely(), 6);
}

TEST(BatchTargets, SettingARowAgainReplacesItsTarget) {
  Batch b = empty_batch();
  b.set_one_hot(3, 2);
  b.set_one_hot(5, 1);
  b.set_one_hot(3, 4);
  EXPECT_EQ(b.target_value(3, 2), 0.0f);
  EXPECT_EQ(b.target_value(3, 4), 1.0f);
  EXPECT_EQ(b.target_value(5, 1), 1.0f);
  EXPECT_EQ(b.dense_target_row(3), (std::vector<float>{0, 0, 0, 0, 1, 0, 0}));
}

TEST(BatchTargets, TokensOutsideTheVocabularyOrListedTwiceAreRejected) {
  Batch b = empty_batch();
  EXPECT_THROW(b.set_one_hot(0, 7), std::invalid_argument);
  EXPECT_THROW(b.set_one_hot(0, -1), std::invalid_argument);
  const std::vector<int32_t> twice = {3, 1, 3};
  EXPECT_THROW(b.set_uniform(0, twice.data(), 3), std::invalid_argument);
}

TEST(BatchTargets, ResizeClearsTheTargets) {
  Batch b = empty_batch();
  b.set_one_hot(0, 1);
  b.resize(1, 2, 3);
  EXPECT_EQ(b.target_slot, (std::vector<int32_t>{-1, -1}));
  EXPECT_EQ(b.target_offsets, (std::vector<int64_t>{0}));
  EXPECT_TRUE(b.target_tokens.empty());
  EXPECT_TRUE(b.target_probs.empty());
}

}  // namespace
}  // namespace normlab
