#include "normlab/io/nearest_name.hpp"

#include <algorithm>
#include <cctype>

namespace normlab {

namespace {

std::string folded(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != '-' && c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const std::string suffix : {"norm", "ln"}) {
    if (out.size() > suffix.size() && out.ends_with(suffix)) {
      out.resize(out.size() - suffix.size());
      break;
    }
  }
  return out;
}

// Levenshtein distance (insertions, deletions, substitutions), one row at a time.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string nearest_name(const std::string& typed, const std::vector<std::string>& names) {
  const std::string key = folded(typed);
  for (const std::string& name : names) {
    if (folded(name) == key) return name;
  }
  std::string best;
  size_t best_distance = 3;
  for (const std::string& name : names) {
    const size_t d = edit_distance(typed, name);
    if (d < best_distance && d < typed.size()) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace normlab
