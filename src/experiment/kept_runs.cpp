#include "normlab/experiment/kept_runs.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "normlab/io/atomic_file.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

constexpr const char* kRunRecord = "run.json";

// Copies every regular file at the top of `from` except the lock and the log (which names the
// machine's paths) into `to`, run.json last.
void copy_run_files(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(from)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name != ".lock" && name != "train.log" && name != kRunRecord) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  files.push_back(from / kRunRecord);
  for (const fs::path& file : files) write_file_atomic(to / file.filename(), read_file(file));
}

}  // namespace

bool is_kept_run(const fs::path& kept) {
  return fs::is_regular_file(kept / kRunRecord);
}

void keep_run(const fs::path& dir, const fs::path& kept) {
  copy_run_files(dir, kept);
}

void restore_kept_run(const fs::path& kept, const fs::path& dir) {
  copy_run_files(kept, dir);
}

}  // namespace normlab
