// Writing files so that nothing is ever half-written: write to "NAME.tmp.PID", flush, then
// rename over NAME (rename is atomic within a filesystem).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace normlab {

// Writes `bytes` to `path` atomically; creates parent directories. Throws InputError on failure.
// "-" is standard output. A target that exists and is not a regular file (a device such as
// /dev/null or /dev/stdout, a FIFO) is written through, not replaced; a symbolic link to a
// regular file replaces the file it names and stays a link; a directory is refused.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// Reads a whole regular file; throws InputError naming the file if it is missing, a directory,
// not a regular file (FIFO, device, socket: reading would block or never end), unreadable, or
// larger than `max_bytes` (0: no stated bound) or than half of this machine's available memory,
// checked before anything is read.
std::string read_file(const std::filesystem::path& path, uintmax_t max_bytes = 0);

// The first `bytes` bytes of a regular file (fewer if it is shorter), with read_file's checks
// of what the path is; for a format's header read before its body.
std::string read_file_head(const std::filesystem::path& path, uintmax_t bytes);

// The bound of text files a person writes (experiment and claims files): 16 MiB.
inline constexpr uintmax_t kMaxWrittenTextBytes = uintmax_t(16) << 20;

}  // namespace normlab
