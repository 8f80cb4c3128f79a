// libFuzzer harness: the SQL of `normlab results OUT --sql QUERY [--csv|--json]`
// (apps/normlab/cmd_results.cpp): query_results_store with limits, then the three printed forms
// of its rows (query_table.hpp), on a small store made once per process with the store's own
// writer (two runs, their results, curves and a probe file).
//
// Input: the query (cut at the first NUL byte, as a command-line argument would be).
//
// The promises checked besides the sanitizers: the query never writes (the store's bytes are
// those it was made with: size and modification time after every input, a hash every 1000
// inputs and at exit; its folder holds no other file but an empty -wal and the -shm); one
// statement runs (a query that returns has nothing after its first statement); it ends within
// its limits (at most kLimits.max_rows rows; no input runs 5 s past kLimits.max_seconds, well
// under libFuzzer's -timeout). A normlab InputError or UsageError is the expected refusal; any
// other exception, crash, leak, hang or sanitizer report is a bug.
#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "fuzz_refusal.hpp"
#include "fuzz_scratch.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/store/results_store.hpp"
#include "query_table.hpp"

namespace fs = std::filesystem;

namespace {

constexpr normlab::QueryLimits kLimits{10000, 1.0};
constexpr double kSlackSeconds = 5;

[[noreturn]] void broken(const char* promise, const std::string& sql) {
  std::fprintf(stderr, "fuzz_store_query: %s; query: %s\n", promise, sql.c_str());
  std::abort();
}

normlab::RunRows sample_run(const std::string& hash, const std::string& variant, uint64_t seed) {
  normlab::RunRows r;
  r.run = {hash,
           variant,
           variant,
           "rmsnorm",
           seed,
           "{\"scheme\": \"" + variant + "\"}",
           "finished",
           "runs/" + variant + "__seed" + std::to_string(seed),
           "2026-11-23T00:00:01Z",
           "2026-11-23T00:01:00Z",
           59.5,
           variant,
           "{}"};
  for (int64_t length : {4, 8, 16}) {
    r.results.push_back(
        {"raw", "accuracy", length, length + 1, 100, 0.5 + 0.01 * length, 0.4, 0.6});
    r.results.push_back({"ema", "tvd", length, length + 1, 100, 0.1, NAN, NAN});
  }
  r.curves = {{0, NAN, 2.0}, {50, 1.5, NAN}, {100, 1.2, 1.3}};
  r.probes = {{"probe_depth", "csv", "layer,rms\n0,1.5\n1,\"2,5\"\n"}};
  return r;
}

uint64_t file_hash(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

struct Fingerprint {
  off_t size = 0;
  timespec mtime{};
  bool operator==(const Fingerprint& o) const {
    return size == o.size && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
  }
};

Fingerprint fingerprint(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return {};
  return {st.st_size, st.st_mtim};
}

struct Store {
  fs::path file;
  Fingerprint print;
  uint64_t hash = 0;

  Store() : file(normlab::fuzz::scratch_dir() / "results.sqlite") {
    {
      normlab::ResultsStore store(file);
      const int64_t id = store.begin_experiment({"fuzz", "abc", "{\"name\": \"fuzz\"}", "0.1.0",
                                                 "deadbeef", "host", "2026-11-23T00:00:00Z"});
      store.record_run(id, sample_run("h1", "pre", 1));
      store.record_run(id, sample_run("h2", "post", 1));
      store.finish_experiment(id, "2026-11-23T00:02:00Z");
    }
    print = fingerprint(file);
    hash = file_hash(file);
  }
  ~Store() { check_hash(""); }

  void check_hash(const std::string& sql) const {
    if (file_hash(file) != hash) broken("the store's bytes changed", sql);
  }
  // Only the store, an empty write-ahead log and the shared-memory index in its folder.
  void check_unchanged(const std::string& sql) const {
    if (!(fingerprint(file) == print)) broken("the store's size or time changed", sql);
    for (const auto& entry : fs::directory_iterator(file.parent_path())) {
      const std::string name = entry.path().filename().string();
      if (name == "results.sqlite" || name == "results.sqlite-shm") continue;
      if (name == "results.sqlite-wal" && fs::file_size(entry.path()) == 0) continue;
      broken(("a file appeared or grew beside the store: " + name).c_str(), sql);
    }
  }
};

// Whether anything but spaces and comments follows the first statement of `sql`, prepared on a
// connection of its own without normlab's authorizer.
bool has_second_statement(const fs::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  bool more = false;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    const char* tail = nullptr;
    sqlite3_stmt* first = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &first, &tail) == SQLITE_OK && tail != nullptr) {
      sqlite3_stmt* second = nullptr;
      more = sqlite3_prepare_v2(db, tail, -1, &second, nullptr) != SQLITE_OK || second != nullptr;
      sqlite3_finalize(second);
    }
    sqlite3_finalize(first);
  }
  sqlite3_close(db);
  return more;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Store store;
  static uint64_t inputs = 0;
  const std::string raw(reinterpret_cast<const char*>(data), size);
  const std::string sql = raw.substr(0, raw.find('\0'));
  const auto start = std::chrono::steady_clock::now();
  try {
    const normlab::QueryTable t = normlab::query_results_store(store.file, sql, kLimits);
    if (static_cast<int64_t>(t.rows.size()) > kLimits.max_rows) broken("too many rows", sql);
    if (has_second_statement(store.file, sql)) broken("a second statement was ignored", sql);
    normlab::cli::format_text_table(t);
    normlab::cli::format_csv_table(t);
    normlab::cli::format_json_table(t);
  } catch (const normlab::InputError& e) {
    normlab::fuzz::refused(e);
  } catch (const normlab::UsageError& e) {
    normlab::fuzz::refused(e);
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  if (took.count() > kLimits.max_seconds + kSlackSeconds) broken("ran past its time limit", sql);
  store.check_unchanged(sql);
  if (++inputs % 1000 == 0) store.check_hash(sql);
  return 0;
}
