// write_file_atomic (atomic_file.hpp) on targets other than a plain new file: what exists at the
// path is never replaced by something else (a device, a link, a FIFO stay what they are).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

TEST(AtomicFile, ANewFileAndAnExistingOneAreWrittenWhole) {
  TempDir tmp;
  write_file_atomic(tmp / "a" / "b.txt", "one");
  EXPECT_EQ(read_file(tmp / "a" / "b.txt"), "one");
  write_file_atomic(tmp / "a" / "b.txt", "two");
  EXPECT_EQ(read_file(tmp / "a" / "b.txt"), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp / "a"), fs::directory_iterator()), 1)
      << "no temporary file left";
}

TEST(AtomicFile, ALinkStaysALinkAndItsFileIsReplaced) {
  TempDir tmp;
  write_file_atomic(tmp / "target.txt", "old");
  fs::create_symlink(tmp / "target.txt", tmp / "link.txt");
  write_file_atomic(tmp / "link.txt", "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(tmp / "link.txt")));
  EXPECT_EQ(read_file(tmp / "target.txt"), "new");
}

TEST(AtomicFile, ADeviceIsWrittenThroughNotReplaced) {
  // /dev/null exists on every Linux; it must stay a character device.
  write_file_atomic("/dev/null", "nothing");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(AtomicFile, AFifoReceivesTheBytes) {
  TempDir tmp;
  const fs::path fifo = tmp / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  // The reader opens the FIFO; the writer's open waits for it, so no timing is involved.
  std::thread reader([&] {
    FILE* f = std::fopen(fifo.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    char buffer[64];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) received.append(buffer, n);
    std::fclose(f);
  });
  write_file_atomic(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST(AtomicFile, ADashIsStandardOutput) {
  ::testing::internal::CaptureStdout();
  write_file_atomic("-", "to stdout\n");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "to stdout\n");
  EXPECT_FALSE(fs::exists("-"));
}

TEST(AtomicFile, ADirectoryIsRefused) {
  TempDir tmp;
  fs::create_directories(tmp / "dir");
  try {
    write_file_atomic(tmp / "dir", "x");
    FAIL() << "a directory was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (tmp / "dir").string() + ": is a directory, not a file");
  }
  EXPECT_TRUE(fs::is_directory(tmp / "dir"));
}

// Reading: a device, or a link to one, is refused; so is a file over the stated bound, before
// any byte is read (the 2 GB address-space guard of the hostile tests would catch a read).
TEST(AtomicFile, ReadingRefusesDevicesAndOversizedFiles) {
  TempDir tmp;
  auto error = [](const fs::path& p, uintmax_t max_bytes) -> std::string {
    try {
      read_file(p, max_bytes);
      return "";
    } catch (const InputError& e) {
      return e.what();
    }
  };
  EXPECT_EQ(error("/dev/zero", 0), "/dev/zero: is not a regular file (a FIFO, device or socket)");
  fs::create_symlink("/dev/zero", tmp / "zero.csv");
  EXPECT_NE(error(tmp / "zero.csv", 0).find("is not a regular file"), std::string::npos);
  write_file_atomic(tmp / "big.toml", std::string(900, 'x'));
  EXPECT_EQ(error(tmp / "big.toml", 899),
            (tmp / "big.toml").string() + ": 900 B is larger than such a file may be (899 B)");
  EXPECT_EQ(read_file(tmp / "big.toml", 900).size(), 900u);
}

}  // namespace
}  // namespace normlab
