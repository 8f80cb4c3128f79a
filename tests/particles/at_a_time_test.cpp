// for_each_at_a_time: every item once, at most `workers` at once, and the first error rethrown.
#include "particles/at_a_time.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace normlab::particles {
namespace {

TEST(AtATime, EveryItemOnceAtAnyWorkerCount) {
  const std::vector<size_t> items{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  for (int workers : {1, 2, 3, 16}) {
    std::vector<std::atomic<int>> calls(items.size());
    std::atomic<int> running{0}, most{0};
    for_each_at_a_time(items, workers, [&](size_t i) {
      const int now = ++running;
      for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
      }
      ++calls[i];
      --running;
    });
    for (size_t i = 0; i < items.size(); ++i) EXPECT_EQ(calls[i], 1) << workers << " " << i;
    EXPECT_LE(most, workers);
  }
}

// An item's exception reaches the caller once the threads have joined; one at a time, the
// items after it do not start.
TEST(AtATime, ErrorIsRethrown) {
  const std::vector<size_t> items{0, 1, 2, 3, 4, 5, 6, 7};
  for (int workers : {1, 2}) {
    std::atomic<int> started{0};
    try {
      for_each_at_a_time(items, workers, [&](size_t i) {
        ++started;
        if (i == 5) throw std::runtime_error("run 5 failed");
      });
      ADD_FAILURE() << "no exception with " << workers << " workers";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "run 5 failed");
    }
    if (workers == 1) {
      EXPECT_EQ(started, 6);
    }
  }
}

}  // namespace
}  // namespace normlab::particles
