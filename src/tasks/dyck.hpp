// Dyck(k, m) internals shared with the tests: token ids, the legal-next-token rule and the
// uniform sampler's opening probabilities. The task itself is registered by dyck_info().
#pragma once

#include <cstdint>
#include <vector>

namespace normlab::dyck {

// Vocabulary: BOS, EOS, then k openers, then k closers (closer i matches opener i).
inline constexpr int32_t kBos = 0;
inline constexpr int32_t kEos = 1;
inline int32_t opener(int type) {
  return 2 + type;
}
inline int32_t closer(int k, int type) {
  return 2 + k + type;
}

// The legal next tokens after `prefix` (string tokens, no BOS), ascending: every opener if the
// depth is below m, the closer matching the innermost open bracket if the depth is positive,
// EOS if the depth is 0. Throws std::logic_error if `prefix` is not a legal prefix.
std::vector<int32_t> legal_next(const std::vector<int32_t>& prefix, int k, int m);

// P(the next symbol opens a bracket) for a uniformly random Dyck string of length n with depth
// ≤ m, given r symbols still to come (1 ≤ r ≤ n) at depth d (r − d even, 0 ≤ d ≤ r).
// The count of completions does not depend on k (each completion from (r, d) has (r − d)/2
// openers), so neither does this probability.
class OpenProbability {
 public:
  // A table by dynamic programming over (remaining, depth) when the bound binds (m < n/2),
  // the closed ballot-number form otherwise.
  OpenProbability(int64_t n, int64_t m, bool force_table = false);
  double operator()(int64_t r, int64_t d) const {
    if (width_ == 0) return unbounded(r, d);
    return p_[r * width_ + d / 2];
  }
  // Without a depth bound (ratio of ballot numbers): (d + 2)·j / (r·(d + 1)), where
  // j = (r − d)/2 is the number of openers still to come.
  static double unbounded(int64_t r, int64_t d) {
    const double j = static_cast<double>((r - d) / 2);
    return (static_cast<double>(d) + 2.0) * j /
           (static_cast<double>(r) * (static_cast<double>(d) + 1.0));
  }
  int64_t table_bytes() const { return static_cast<int64_t>(p_.size() * sizeof(float)); }

 private:
  int64_t width_ = 0;     // depths stored per row (d/2 = 0..m/2); 0: closed form
  std::vector<float> p_;  // (n + 1, width) P(open | r, d)
};

}  // namespace normlab::dyck
