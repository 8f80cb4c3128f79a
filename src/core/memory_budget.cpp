#include "normlab/core/memory_budget.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "normlab/base/errors.hpp"

namespace normlab {

double available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    double kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024.0;
  }
  return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
         static_cast<double>(::sysconf(_SC_PAGESIZE));
}

std::string readable_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 1000.0 && u < 6) {
    bytes /= 1000.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

void check_fits_in_memory(double bytes, const std::string& what) {
  const double available = available_memory_bytes();
  if (bytes <= available) return;
  throw UsageError(fmt::format("{} need about {}, but this machine has {} available", what,
                               readable_bytes(bytes), readable_bytes(available)));
}

}  // namespace normlab
