// Writing files so that nothing is ever half-written: write to "NAME.tmp.PID", flush, then
// rename over NAME (rename is atomic within a filesystem).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace normlab {

// Writes `bytes` to `path` atomically; creates parent directories. Throws InputError on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// Reads a whole file; throws InputError naming the file if it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace normlab
