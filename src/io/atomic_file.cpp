#include "normlab/io/atomic_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "normlab/base/errors.hpp"
#include "normlab/core/memory_budget.hpp"

namespace normlab {

namespace {

// Writes bytes to an open stream and flushes it; false on any error (errno says which).
bool write_all(FILE* f, std::string_view bytes) {
  return std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0;
}

// A target that is not a regular file (/dev/stdout, /dev/null, a FIFO) is written through:
// renaming a file over it would replace the device or link itself.
void write_through(const std::filesystem::path& path, std::string_view bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    throw InputError(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
  }
  const bool ok = write_all(f, bytes);
  const int saved = errno;
  std::fclose(f);
  if (!ok) {
    throw InputError(fmt::format("{}: write failed: {}", path.string(), std::strerror(saved)));
  }
}

}  // namespace

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  if (path == "-") {
    if (!write_all(stdout, bytes)) {
      throw InputError(fmt::format("standard output: write failed: {}", std::strerror(errno)));
    }
    return;
  }
  std::error_code ec;
  const std::filesystem::file_status target = std::filesystem::status(path, ec);  // follows links
  if (std::filesystem::is_directory(target)) {
    throw InputError(fmt::format("{}: is a directory, not a file", path.string()));
  }
  if (std::filesystem::exists(target) && !std::filesystem::is_regular_file(target)) {
    return write_through(path, bytes);
  }
  // A link to a regular file: the file it names is replaced, the link stays.
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec)) &&
      std::filesystem::exists(target)) {
    return write_file_atomic(std::filesystem::canonical(path, ec), bytes);
  }
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const std::filesystem::path tmp = path.string() + fmt::format(".tmp.{}", ::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    throw InputError(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
  }
  const bool ok = write_all(f, bytes) && ::fsync(fileno(f)) == 0;
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

namespace {

// Refuses what is not a regular file: a FIFO or a device (/dev/urandom) would block or never end.
void check_regular_file(const std::filesystem::path& path) {
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
}

std::ifstream open_for_reading(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open for reading", path.string()));
  return in;
}

}  // namespace

std::string read_file_head(const std::filesystem::path& path, uintmax_t bytes) {
  check_regular_file(path);
  std::ifstream in = open_for_reading(path);
  std::string head(static_cast<size_t>(bytes), '\0');
  in.read(head.data(), static_cast<std::streamsize>(bytes));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

std::string read_file(const std::filesystem::path& path, uintmax_t max_bytes) {
  check_regular_file(path);
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(fmt::format("{}: cannot read its size", path.string()));
  if (max_bytes > 0 && size > max_bytes) {
    throw InputError(fmt::format("{}: {} is larger than such a file may be ({})", path.string(),
                                 readable_bytes(static_cast<double>(size)),
                                 readable_bytes(static_cast<double>(max_bytes))));
  }
  if (static_cast<double>(size) > available_memory_bytes() / 2) {
    throw InputError(fmt::format("{}: {} is more than half of the {} this machine has available",
                                 path.string(), readable_bytes(static_cast<double>(size)),
                                 readable_bytes(available_memory_bytes())));
  }
  std::ifstream in = open_for_reading(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace normlab
