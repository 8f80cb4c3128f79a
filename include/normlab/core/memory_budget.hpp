// Checking that a buffer fits in this machine's memory before allocating it, so that a config
// asking for terabytes fails at once with an estimate instead of thrashing or dying in
// std::bad_alloc.
#pragma once

#include <cstdint>
#include <string>

namespace normlab {

// Bytes of memory available for new allocations: MemAvailable of /proc/meminfo, or the
// physical memory when that cannot be read.
double available_memory_bytes();

// "512 B", "3.2 MB", "1.6 TB": a byte count for messages.
std::string readable_bytes(double bytes);

// Throws UsageError "WHAT need about X, but this machine has Y available" when `bytes`
// exceeds the available memory.
void check_fits_in_memory(double bytes, const std::string& what);

}  // namespace normlab
