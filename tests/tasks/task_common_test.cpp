// Properties every registered task must have, checked on every task with its default
// parameters: documented registry entries, reproducible generation, well-formed batches, and
// rejection of lengths outside the range with a message naming task, length and range.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include <nlohmann/json.hpp>

#include "normlab/io/toml_reader.hpp"  // complete TomlSection: make_task(json) overload resolution
#include "normlab/tasks/task.hpp"
#include "task_test_util.hpp"

namespace normlab {
namespace {

using testing::Scored;

Scored scored_of(const std::string& name) {
  if (name == "dyck" || name == "char_lm") return Scored::all;
  for (const char* last :
       {"set_complement", "max_retrieval", "tomita", "argmax_retrieval", "dict_lookup"}) {
    if (name == last) return Scored::last;
  }
  return Scored::marked;  // mqar's queries, the Chomsky-hierarchy tasks' output positions
}

// Lengths to try: the smallest, a training-sized one, and a longer one, all within range.
std::vector<int64_t> lengths_of(const Task& task) {
  const LengthRange r = task.length_range();
  std::vector<int64_t> out;
  for (int64_t want : {r.min, int64_t{16}, int64_t{100}}) {
    int64_t n = std::clamp(want, r.min, r.max);
    n = r.min + (n - r.min) / r.step * r.step;
    if (out.empty() || out.back() != n) out.push_back(n);
  }
  return out;
}

TEST(TaskRegistry, ListsEveryTaskWithHelp) {
  std::vector<std::string> names;
  for (const TaskInfo& info : task_registry()) {
    names.push_back(info.name);
    EXPECT_FALSE(info.summary.empty()) << info.name;
    for (const TaskParamDef& def : info.params) EXPECT_FALSE(def.help.empty()) << def.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"set_complement",
                                             "max_retrieval",
                                             "dyck",
                                             "tomita",
                                             "argmax_retrieval",
                                             "dict_lookup",
                                             "char_lm",
                                             "mqar",
                                             "even_pairs",
                                             "modular_arithmetic",
                                             "parity_check",
                                             "cycle_navigation",
                                             "stack_manipulation",
                                             "reverse_string",
                                             "modular_arithmetic_brackets",
                                             "solve_equation",
                                             "duplicate_string",
                                             "missing_duplicate_string",
                                             "odds_first",
                                             "binary_addition",
                                             "binary_multiplication",
                                             "compute_sqrt",
                                             "bucket_sort"}));
  EXPECT_NE(testing::usage_error([] { find_task("nope"); }).find("dict_lookup"), std::string::npos);
}

TEST(TaskRegistry, JsonRoundTripKeepsTheTask) {
  for (const TaskInfo& info : task_registry()) {
    TaskParams params;
    for (const TaskParamDef& def : info.params) params[def.name] = def.fallback;
    const auto a = info.make(params);
    const auto b = make_task_from_json(task_to_json(info.name, params));
    EXPECT_EQ(a->label(), b->label());
    Rng r1(5), r2(5);
    const int64_t n = lengths_of(*a).front();
    EXPECT_TRUE(testing::same_batch(a->make_batch(n, 3, r1), b->make_batch(n, 3, r2)));
  }
}

TEST(TaskCommon, SameSeedSameBatchOtherSeedOtherBatch) {
  for (const TaskInfo& info : task_registry()) {
    const auto task = testing::make(info.name);
    for (const int64_t n : lengths_of(*task)) {
      SCOPED_TRACE(task->label() + " n=" + std::to_string(n));
      Rng a(42), b(42), c(43);
      const Batch x = task->make_batch(n, 8, a);
      EXPECT_TRUE(testing::same_batch(x, task->make_batch(n, 8, b)));
      // At length 1 these tasks have one sequence (the references' dummies, n = 0, n = 1).
      bool fixed = false;
      for (const char* one : {"missing_duplicate_string", "binary_addition",
                              "binary_multiplication", "compute_sqrt", "solve_equation"}) {
        fixed |= info.name == one && n == 1;
      }
      if (!fixed) {
        EXPECT_FALSE(testing::same_batch(x, task->make_batch(n, 8, c)));
      }
      if (n < 16) continue;
      // The sequences within a batch differ too (at short lengths they may coincide).
      const int64_t row = x.len * x.fields;
      const std::vector<float> target = x.dense_target();
      EXPECT_FALSE(std::equal(x.tokens.begin(), x.tokens.begin() + row, x.tokens.begin() + row) &&
                   std::equal(target.begin(), target.begin() + x.len * x.vocab,
                              target.begin() + x.len * x.vocab));
    }
  }
}

TEST(TaskCommon, BatchesAreWellFormed) {
  for (const TaskInfo& info : task_registry()) {
    const auto task = testing::make(info.name);
    for (const int64_t n : lengths_of(*task)) {
      SCOPED_TRACE(task->label() + " n=" + std::to_string(n));
      Rng rng(7);
      testing::expect_well_formed(*task, task->make_batch(n, 16, rng), n, scored_of(info.name));
    }
  }
}

TEST(TaskCommon, SampledTargetsAreWellFormed) {
  for (const std::string name : {"set_complement", "dyck"}) {
    const auto task = testing::make(name, {{"targets", std::string("sampled")}});
    for (const int64_t n : lengths_of(*task)) {
      SCOPED_TRACE(task->label() + " n=" + std::to_string(n));
      Rng rng(7);
      const Batch batch = task->make_batch(n, 16, rng);
      testing::expect_well_formed(*task, batch, n, scored_of(name));
      for (int64_t r = 0; r < batch.batch * batch.len; ++r) {
        if (batch.weight[r] == 0) continue;
        int ones = 0;
        for (int j = 0; j < batch.vocab; ++j) ones += batch.target_value(r, j) == 1.0f;
        ASSERT_EQ(ones, 1) << "row " << r << " is not one-hot";
      }
    }
  }
}

TEST(TaskCommon, LengthsOutsideTheRangeAreRejectedNamingTaskLengthAndRange) {
  for (const TaskInfo& info : task_registry()) {
    const auto task = testing::make(info.name);
    const LengthRange r = task->length_range();
    std::vector<int64_t> bad = {r.min - 1, -3};
    if (r.max < LengthRange{}.max) bad.push_back(r.max + 1);
    if (r.step > 1) bad.push_back(r.min + 1);
    for (const int64_t n : bad) {
      Rng rng(1);
      const std::string msg = testing::usage_error([&] { task->make_batch(n, 2, rng); });
      EXPECT_NE(msg.find("task " + task->label()), std::string::npos) << msg;
      EXPECT_NE(msg.find("length " + std::to_string(n) + " "), std::string::npos) << msg;
      EXPECT_NE(msg.find("allowed: "), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::to_string(r.min)), std::string::npos) << msg;
    }
  }
}

TEST(TaskCommon, ScoringAddsTheNamedMetrics) {
  for (const TaskInfo& info : task_registry()) {
    const auto task = testing::make(info.name);
    Rng rng(3);
    const int64_t n = lengths_of(*task).back();
    const Batch batch = task->make_batch(n, 4, rng);
    const auto results = testing::score_all(*task, batch, [&](int64_t b, int64_t t, float* out) {
      testing::logits_from_target(batch, b, t, out);
    });
    std::vector<std::string> names;
    for (const std::string& m : task->metric_names()) {
      names.push_back(m);
      EXPECT_EQ(results.count(m), 1u) << info.name << " " << m;
    }
    EXPECT_EQ(results.size(), names.size()) << info.name;
  }
}

// Generation from two threads at once (shared per-length tables, thread-local buffers) gives
// the same sequences as generation from one.
TEST(TaskCommon, ConcurrentGenerationMatchesSequential) {
  for (const TaskInfo& info : task_registry()) {
    const auto shared = testing::make(info.name);
    const int64_t n = lengths_of(*shared).back();
    Batch got[2];
    std::thread t0([&] {
      Rng rng(100);
      got[0] = shared->make_batch(n, 8, rng);
    });
    std::thread t1([&] {
      Rng rng(101);
      got[1] = shared->make_batch(n, 8, rng);
    });
    t0.join();
    t1.join();
    for (int i = 0; i < 2; ++i) {
      Rng rng(100 + i);
      EXPECT_TRUE(testing::same_batch(got[i], testing::make(info.name)->make_batch(n, 8, rng)))
          << info.name;
    }
  }
}

}  // namespace
}  // namespace normlab
