// `normlab tasks` lists every registered task with its lengths: "MIN to MAX", or "MIN and up"
// for a task without a longest length (never the sentinel that stands for one).
#include <gtest/gtest.h>

#include <exception>
#include <memory>
#include <string>

#include "normlab/tasks/task.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::RunResult;

TEST(TasksCommand, ListsEachTaskWithItsLengths) {
  const RunResult r = testing::run_normlab({"tasks"});
  ASSERT_TRUE(r.exited) << r.describe();
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out.find(std::to_string(kNoLongestLength)), std::string::npos) << r.out;
  int unbounded = 0;
  for (const TaskInfo& info : task_registry()) {
    const size_t at = ("\n" + r.out).find("\n" + info.name + ": ");  // = its line's start in out
    ASSERT_NE(at, std::string::npos) << info.name << "\n" << r.out;
    const std::string block = r.out.substr(at, r.out.find("\n\n", at) - at);  // its entry
    TaskParams defaults;
    for (const TaskParamDef& p : info.params) defaults[p.name] = p.fallback;
    std::unique_ptr<Task> task;
    try {
      task = info.make(defaults);
    } catch (const std::exception&) {
      continue;  // listed as not available (e.g. char_lm without its corpus)
    }
    const LengthRange range = task->length_range();
    const std::string lengths =
        range.max == kNoLongestLength
            ? "lengths: " + std::to_string(range.min) + " and up"
            : "lengths: " + std::to_string(range.min) + " to " + std::to_string(range.max);
    unbounded += range.max == kNoLongestLength;
    EXPECT_NE(block.find(lengths), std::string::npos) << info.name << ": " << lengths << "\n"
                                                      << block;
  }
  EXPECT_GT(unbounded, 0);  // the case this test is about is exercised
}

}  // namespace
}  // namespace normlab
