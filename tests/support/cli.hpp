// Running the normlab command line from tests, and temporary directories.
//
// run_normlab() runs NORMLAB_BINARY through /bin/sh with `exec`, so the wait status is the
// program's own: a crash shows as a signal, not as a shell exit code.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace normlab::testing {

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "normlab_test_XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// How many times `what` occurs in `text` (overlapping occurrences count too).
inline size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct RunResult {
  bool exited = false;  // ended by exit(), not by a signal
  int exit_code = -1;   // valid when exited
  int signal = 0;       // the terminating signal when !exited
  std::string out, err;
  // The lines of stderr (a final line without '\n' counts too).
  std::vector<std::string> err_lines() const {
    std::vector<std::string> lines;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  std::string describe() const {
    return "exit " + (exited ? std::to_string(exit_code) : "by signal " + std::to_string(signal)) +
           "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
  }
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

// Limits for a run of hostile input: the address space (KiB) and a wall-clock guard after
// which the program is killed. Not a timing assertion: a program that allocates gigabytes or
// blocks on a FIFO ends by a signal or an exit code above 128, which the test reports.
struct RunLimits {
  long address_space_kib = 0;  // 0: unlimited
  int kill_after_seconds = 0;  // 0: never
};
inline constexpr RunLimits kHostileInputLimits{2'000'000, 60};

// `env`: extra environment for the program, e.g. {"OPENBLAS_NUM_THREADS=2"}; `cwd`: the folder
// it starts in ("" = the test's own).
inline RunResult run_normlab(const std::vector<std::string>& args,
                             const std::vector<std::string>& env = {}, const RunLimits& limits = {},
                             const std::string& cwd = "") {
  TempDir io;
  std::string cmd;
  if (!cwd.empty()) cmd += "cd " + shell_quote(cwd) + " && ";
  if (limits.address_space_kib > 0) {
    cmd += "ulimit -v " + std::to_string(limits.address_space_kib) + " && ";
  }
  cmd += "exec";
  if (limits.kill_after_seconds > 0) {
    cmd += " timeout -s KILL " + std::to_string(limits.kill_after_seconds);
  }
  if (!env.empty()) {
    cmd += " env";
    for (const std::string& e : env) cmd += " " + shell_quote(e);
  }
  cmd += " " + shell_quote(NORMLAB_BINARY);
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote((io / "out").string()) + " 2>" + shell_quote((io / "err").string()) +
         " </dev/null";
  const int status = std::system(cmd.c_str());
  RunResult r;
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  r.out = slurp(io / "out");
  r.err = slurp(io / "err");
  return r;
}

}  // namespace normlab::testing
