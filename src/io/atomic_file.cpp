#include "normlab/atomic_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "normlab/errors.hpp"

namespace normlab {

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const std::filesystem::path tmp = path.string() + fmt::format(".tmp.{}", ::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    throw InputError(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
  }
  const size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
  const bool ok = written == bytes.size() && std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  std::fclose(f);
  if (!ok) {
    std::filesystem::remove(tmp, ec);
    throw InputError(fmt::format("{}: write failed: {}", path.string(), std::strerror(errno)));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw InputError(fmt::format("{}: cannot rename into place: {}", path.string(), ec.message()));
  }
}

std::string read_file(const std::filesystem::path& path) {
  // Only regular files: a FIFO or a device (/dev/urandom) would block or never end.
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st))
    throw InputError(fmt::format("{}: no such file", path.string()));
  if (std::filesystem::is_directory(st)) {
    throw InputError(fmt::format("{}: is a directory, not a file", path.string()));
  }
  if (!std::filesystem::is_regular_file(st)) {
    throw InputError(
        fmt::format("{}: is not a regular file (a FIFO, device or socket)", path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open for reading", path.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace normlab
