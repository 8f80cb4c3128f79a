#include "normlab/io/crash_points.hpp"

#include <csignal>
#include <cstdlib>
#include <string>

namespace normlab {

namespace {

// The crash point to die at; 0: never.
long crash_target() {
  const char* at = std::getenv("NORMLAB_TEST_CRASH_AT");
  if (at == nullptr) return 0;
  if (const char* rank = std::getenv("NORMLAB_TEST_CRASH_RANK")) {
    const char* mine = std::getenv("OMPI_COMM_WORLD_RANK");
    if (mine == nullptr || std::string(mine) != rank) return 0;
  }
  return std::strtol(at, nullptr, 10);
}

}  // namespace

void crash_point() {
  static const long target = crash_target();
  static long passed = 0;
  if (target > 0 && ++passed == target) std::raise(SIGKILL);
}

}  // namespace normlab
