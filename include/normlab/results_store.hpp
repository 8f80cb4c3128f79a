// The results store: an experiment's results in one SQLite file (OUT/results.sqlite), so
// results can be queried and joined across experiments with any SQLite client:
//
//   experiment(name TEXT, config_json TEXT)
//   runs(variant TEXT, scheme TEXT, norm TEXT, seed INTEGER, status TEXT, run_dir TEXT)
//   results(variant TEXT, scheme TEXT, norm TEXT, seed INTEGER, weights TEXT, length INTEGER,
//           seq_len INTEGER, metric TEXT, value REAL, ci_low REAL, ci_high REAL, count INTEGER)
//
// The file is rebuilt from scratch each time (written to a temporary name, then renamed).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace normlab {

struct StoredRun {
  std::string variant, scheme, norm, status, run_dir;
  uint64_t seed = 0;
};

struct StoredResult {
  std::string variant, scheme, norm, weights, metric;
  uint64_t seed = 0;
  int64_t length = 0, seq_len = 0, count = 0;
  double value = 0, ci_low = 0, ci_high = 0;
};

// Throws InputError naming the file if SQLite fails.
void write_results_store(const std::filesystem::path& file, const std::string& experiment,
                         const std::string& config_json, const std::vector<StoredRun>& runs,
                         const std::vector<StoredResult>& results);

}  // namespace normlab
