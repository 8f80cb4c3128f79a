#include "normlab/experiment/kept_runs.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "normlab/io/atomic_file.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

constexpr const char* kRunRecord = "run.json";

// Copies the regular files at the top of `from` that `wanted` accepts, except the lock, the log
// (which names the machine's paths) and run.json, into `to`; then run.json.
template <typename Wanted>
void copy_run_files(const fs::path& from, const fs::path& to, Wanted&& wanted) {
  fs::create_directories(to);
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(from)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name != ".lock" && name != "train.log" && name != kRunRecord &&
        wanted(name)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  files.push_back(from / kRunRecord);
  for (const fs::path& file : files) write_file_atomic(to / file.filename(), read_file(file));
}

bool every_file(const std::string&) {
  return true;
}

// What training and evaluation write at the top of a run folder: metrics.jsonl and
// eval_<weights>.csv and .json.
bool trained_file(const std::string& name) {
  const bool eval = name.rfind("eval_", 0) == 0 &&
                    (fs::path(name).extension() == ".csv" || fs::path(name).extension() == ".json");
  return name == "metrics.jsonl" || eval;
}

}  // namespace

bool is_kept_run(const fs::path& kept) {
  return fs::is_regular_file(kept / kRunRecord);
}

void keep_run(const fs::path& dir, const fs::path& kept) {
  copy_run_files(dir, kept, every_file);
}

void restore_kept_run(const fs::path& kept, const fs::path& dir) {
  copy_run_files(kept, dir, every_file);
}

void restore_reused_run(const fs::path& from, const fs::path& dir) {
  copy_run_files(from, dir, trained_file);
}

}  // namespace normlab
