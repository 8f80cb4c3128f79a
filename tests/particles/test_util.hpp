// Helpers shared by the particle tests: running the CLI, temporary folders, small configs.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "normlab/particles/config.hpp"

namespace normlab::particles::testing {

struct CliResult {
  int code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `normlab ARGS` through the shell (ARGS is inserted verbatim).
inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  const std::string command =
      env + (env.empty() ? "" : " ") + NORMLAB_BINARY + " " + args + " 2>&1";
  CliResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, got);
  const int status = ::pclose(pipe);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// `normlab ARGS` fails as a usage error (exit code 2) with one clear message: a single line that
// contains `message`.
inline void expect_usage_error(const std::string& args, const std::string& message) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

// A fresh, empty folder under the system's temporary directory.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("normlab_particles_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A small random-init config with Gaussian Q, K, V (every code path of the right-hand side).
inline ParticlesConfig small_random_config(SpeedLaw scheme) {
  ParticlesConfig c;
  c.scheme = scheme;
  c.init = InitKind::random;
  c.n = 7;
  c.d = 5;
  c.beta = 1.7;
  c.qkv = QkvKind::gaussian;
  c.tau = 0.37;
  c.alpha = 0.8;
  c.r0 = 1.3;
  c.seed = 11;
  c.dt = 0.05;
  c.t_end = 1.0;
  c.record_every = 0.25;
  return c;
}

}  // namespace normlab::particles::testing
