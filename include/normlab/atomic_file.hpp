// Writing files so that nothing is ever half-written: write to "NAME.tmp.PID", flush, then
// rename over NAME (rename is atomic within a filesystem).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace normlab {

// Writes `bytes` to `path` atomically; creates parent directories. Throws InputError on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// Reads a whole regular file; throws InputError naming the file if it is missing, a directory,
// not a regular file (FIFO, device, socket: reading would block or never end), or unreadable.
std::string read_file(const std::filesystem::path& path);

}  // namespace normlab
