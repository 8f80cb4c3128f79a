// tomita: each DFA against hand-written examples and against an independent implementation of
// its definition, the allowed lengths exactly those with both classes, balanced labels that
// match the DFA, uniform sampling within a class, long lengths, and the metrics.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>

#include "task_test_util.hpp"
#include "tasks/tomita.hpp"

namespace normlab {
namespace {

// Examples per language, written by hand from the definitions (a = 1, b = 0 of Tomita 1982).
struct Examples {
  int language;
  std::vector<std::string> accepted, rejected;
};

const std::vector<Examples>& examples() {
  static const std::vector<Examples> all = {
      {1, {"", "a", "aaaa", "aaaaaaaaaa"}, {"b", "ab", "ba", "aaaab", "baaaa", "aabaa"}},
      {2, {"", "ab", "abab", "ababababab"}, {"a", "b", "ba", "aab", "abb", "aba", "abba", "baba"}},
      // In 0/1 (1 = a): accepted ε 1 0 01 11 00 100 110 111 000 100100 110000011100
      // 0111101100; rejected 10 101 010 1010 1110 1011 10001 111010 1001000 11111000.
      {3,
       {"", "a", "b", "ba", "aa", "bb", "abb", "aab", "aaa", "bbb", "abbabb", "aabbbbbaaabb",
        "baaaabaabb"},
       {"ab", "aba", "bab", "abab", "aaab", "abaa", "abbba", "aaabab", "abbabbb", "aaaaabbb"}},
      {4,
       {"", "a", "bb", "abba", "babbab", "aabbaabba", "bbabbabba"},
       {"bbb", "abbba", "bbbb", "aaaabbb", "bbbaaaa", "abbbbbba"}},
      {5,
       {"", "aa", "bb", "abab", "abba", "baab", "aaaabb", "bbbbbb"},
       {"a", "b", "ab", "aaa", "aab", "abbb", "aaaaab"}},
      {6,
       {"", "ab", "ba", "aaa", "bbb", "aabb", "abab", "aaaaaa", "aaaabbbbab", "abbbb"},
       {"a", "b", "aa", "bb", "aab", "aaaa", "abbb"}},
      {7,
       {"", "a", "ba", "ab", "baba", "bbaabbaa", "aabbba", "bbbaaa", "aaaa"},
       {"abab", "ababa", "abababab", "bbaabbaab", "aabab"}},
  };
  return all;
}

TEST(TaskTomita, DfasAgreeWithHandWrittenExamples) {
  for (const Examples& e : examples()) {
    for (const std::string& w : e.accepted) {
      EXPECT_TRUE(tomita::accepts(e.language, w)) << "T" << e.language << " '" << w << "'";
    }
    for (const std::string& w : e.rejected) {
      EXPECT_FALSE(tomita::accepts(e.language, w)) << "T" << e.language << " '" << w << "'";
    }
  }
}

// The definitions written independently of the DFAs: regular expressions, run lists, counts.
bool by_definition(int language, const std::string& w) {
  const auto count = [&](char c) { return static_cast<int>(std::count(w.begin(), w.end(), c)); };
  switch (language) {
    case 1:
      return std::regex_match(w, std::regex("a*"));
    case 2:
      return std::regex_match(w, std::regex("(ab)*"));
    case 3: {
      // Maximal runs; reject an odd a-run immediately followed by an odd b-run.
      std::vector<std::pair<char, size_t>> runs;
      for (const char c : w) {
        if (runs.empty() || runs.back().first != c) runs.push_back({c, 0});
        ++runs.back().second;
      }
      for (size_t i = 0; i + 1 < runs.size(); ++i) {
        if (runs[i].first == 'a' && runs[i].second % 2 == 1 && runs[i + 1].second % 2 == 1) {
          return false;
        }
      }
      return true;
    }
    case 4:
      return w.find("bbb") == std::string::npos;
    case 5:
      return count('a') % 2 == 0 && count('b') % 2 == 0;
    case 6:
      return ((count('a') - count('b')) % 3 + 3) % 3 == 0;
    default:
      return std::regex_match(w, std::regex("b*a*b*a*"));
  }
}

std::vector<std::string> all_words(int64_t n) {
  std::vector<std::string> out;
  for (int64_t bits = 0; bits < (int64_t{1} << n); ++bits) {
    std::string w;
    for (int64_t i = 0; i < n; ++i) w += (bits >> i) & 1 ? 'b' : 'a';
    out.push_back(w);
  }
  return out;
}

TEST(TaskTomita, DfasAgreeWithTheDefinitionsOnAllShortStrings) {
  for (int language = 1; language <= 7; ++language) {
    for (int64_t n = 0; n <= 12; ++n) {
      for (const std::string& w : all_words(n)) {
        ASSERT_EQ(tomita::accepts(language, w), by_definition(language, w))
            << "T" << language << " '" << w << "'";
      }
    }
  }
}

// The accepted lengths are exactly those with both accepted and rejected strings; the others
// are rejected with the rule in the message.
TEST(TaskTomita, LengthRangeIsExactlyTheLengthsWithBothClasses) {
  for (int language = 1; language <= 7; ++language) {
    const auto task = testing::make("tomita", {{"n", int64_t{language}}});
    for (int64_t n = 0; n <= 14; ++n) {
      int accepted = 0, rejected = 0;
      for (const std::string& w : all_words(n)) {
        (tomita::accepts(language, w) ? accepted : rejected) += 1;
      }
      const bool both = accepted > 0 && rejected > 0;
      Rng rng(1);
      if (both) {
        EXPECT_NO_THROW(task->make_batch(n, 2, rng)) << "T" << language << " n=" << n;
      } else {
        const std::string msg = testing::usage_error([&] { task->make_batch(n, 2, rng); });
        EXPECT_NE(msg.find("task tomita(n=" + std::to_string(language) + "): length " +
                           std::to_string(n) + " is outside its range; allowed: at least "),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("(T" + std::to_string(language)), std::string::npos) << msg;
      }
    }
  }
}

TEST(TaskTomita, LabelsAreBalancedAndMatchTheDfa) {
  for (int language = 1; language <= 7; ++language) {
    const auto task = testing::make("tomita", {{"n", int64_t{language}}});
    EXPECT_EQ(task->vocab(), tomita::kVocab);
    Rng rng(41);
    for (const int64_t n :
         {int64_t{4}, int64_t{10}, int64_t{37} + (language == 2 || language == 5)}) {
      const int64_t B = 4000;
      const Batch batch = task->make_batch(n, B, rng);
      int64_t positives = 0;
      for (int64_t b = 0; b < B; ++b) {
        std::string w;
        for (int64_t t = 0; t < n; ++t) {
          const int32_t tok = batch.token(b * batch.len + t);
          ASSERT_TRUE(tok == tomita::kA || tok == tomita::kB);
          w += tok == tomita::kA ? 'a' : 'b';
        }
        const int64_t q = b * batch.len + n;
        ASSERT_EQ(batch.token(q), tomita::kQuery);
        const bool label = batch.target_value(q, tomita::kAccept) == 1.0f;
        ASSERT_EQ(label, batch.target_value(q, tomita::kReject) == 0.0f);
        ASSERT_EQ(label, tomita::accepts(language, w)) << "T" << language << " '" << w << "'";
        positives += label;
      }
      // Binomial(4000, 1/2): standard deviation 31.6; 5 sigma.
      EXPECT_NEAR(positives, B / 2, 160) << "T" << language << " n=" << n;
    }
  }
}

// Within each class, every string of the length is equally likely.
TEST(TaskTomita, SamplingIsUniformWithinEachClass) {
  for (int language = 1; language <= 7; ++language) {
    const int64_t n = 8;
    std::map<std::string, int64_t> counts[2];
    for (const std::string& w : all_words(n)) counts[tomita::accepts(language, w)][w] = 0;
    const auto task = testing::make("tomita", {{"n", int64_t{language}}});
    Rng rng(42);
    const Batch batch = task->make_batch(n, 40000, rng);
    for (int64_t b = 0; b < batch.batch; ++b) {
      std::string w;
      for (int64_t t = 0; t < n; ++t) w += batch.token(b * batch.len + t) == tomita::kA ? 'a' : 'b';
      ++counts[tomita::accepts(language, w)][w];
    }
    for (int c = 0; c < 2; ++c) {
      if (counts[c].size() < 2) continue;  // one string only: nothing to compare
      std::vector<int64_t> v;
      for (const auto& [w, k] : counts[c]) v.push_back(k);
      EXPECT_LT(testing::chi_square_uniform(v), testing::chi_square_bound(v.size() - 1.0))
          << "T" << language << " class " << c;
    }
  }
}

// At long lengths the rescaled counts still sample from both classes correctly.
TEST(TaskTomita, LongStringsHaveTheDrawnLabel) {
  for (int language = 1; language <= 7; ++language) {
    const auto task = testing::make("tomita", {{"n", int64_t{language}}});
    Rng rng(43);
    const int64_t n = 16384;
    const Batch batch = task->make_batch(n, 6, rng);
    int positives = 0;
    for (int64_t b = 0; b < batch.batch; ++b) {
      std::string w;
      for (int64_t t = 0; t < n; ++t) w += batch.token(b * batch.len + t) == tomita::kA ? 'a' : 'b';
      const bool label = batch.target_value((b * batch.len + n), tomita::kAccept) == 1.0f;
      ASSERT_EQ(tomita::accepts(language, w), label) << "T" << language;
      positives += label;
    }
    EXPECT_GT(positives, 0);
    EXPECT_LT(positives, 6);
  }
}

TEST(TaskTomita, RejectsLanguagesOutsideOneToSeven) {
  EXPECT_EQ(testing::usage_error([] {
              testing::make("tomita", {{"n", int64_t{8}}});
            }),
            "task tomita: parameter n = 8 is outside its range; allowed: 1 to 7");
}

TEST(TaskTomita, MetricsOnHandMadeLogits) {
  const auto task = testing::make("tomita", {{"n", int64_t{4}}});
  Rng rng(44);
  const Batch batch = task->make_batch(12, 200, rng);
  auto label = [&](int64_t b) {
    return batch.target_value((b * batch.len + batch.len - 1), tomita::kAccept) == 1.0f;
  };
  // Separating margins of varying size: AUC 1, accuracy 1.
  auto perfect = testing::score_all(*task, batch, [&](int64_t b, int64_t, float* out) {
    std::fill(out, out + tomita::kVocab, 0.0f);
    out[tomita::kAccept] = label(b) ? 0.5f + 0.01f * b : -0.5f - 0.01f * b;
  });
  EXPECT_EQ(perfect["roc_auc"].value, 1.0);
  EXPECT_EQ(perfect["accuracy"].value, 1.0);
  // Inverted: AUC 0, accuracy 0.
  auto inverted = testing::score_all(*task, batch, [&](int64_t b, int64_t, float* out) {
    std::fill(out, out + tomita::kVocab, 0.0f);
    out[tomita::kReject] = label(b) ? 1.0f : -1.0f;
  });
  EXPECT_EQ(inverted["roc_auc"].value, 0.0);
  EXPECT_EQ(inverted["accuracy"].value, 0.0);
  // Constant: AUC 1/2; the tie predicts accept, right on the positives only. Other logits
  // (here a large one on the query token) do not matter.
  int64_t positives = 0;
  auto constant = testing::score_all(*task, batch, [&](int64_t b, int64_t, float* out) {
    std::fill(out, out + tomita::kVocab, 0.0f);
    out[tomita::kQuery] = 50.0f;
    positives += label(b);
  });
  EXPECT_EQ(constant["roc_auc"].value, 0.5);
  EXPECT_DOUBLE_EQ(constant["accuracy"].value, positives / 200.0);
}

}  // namespace
}  // namespace normlab
