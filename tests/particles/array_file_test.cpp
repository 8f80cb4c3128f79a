// The text array format: round trip, and one message naming file and line per kind of damage.
#include "normlab/particles/array_file.hpp"

#include <gtest/gtest.h>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "particles/test_util.hpp"

namespace normlab::particles {
namespace {

using testing::fresh_dir;

class ArrayFile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = fresh_dir("array_file"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& text) {
    const std::filesystem::path p = dir_ / "a.txt";
    write_file_atomic(p, text);
    return p.string();
  }

  // The UsageError message reading `text` as a (2, 3) array gives.
  std::string error_of(const std::string& text) {
    const std::string path = write(text);
    try {
      read_text_array(path, {2, 3}, "test array (2, 3)");
    } catch (const UsageError& e) {
      return e.what();
    }
    return "no error";
  }

  std::filesystem::path dir_;
};

TEST_F(ArrayFile, RoundTripKeepsEveryBit) {
  TextArray a;
  a.shape = {2, 3};
  a.values = {0.1, -2.5e-300, 3.0, 1.0 / 3.0, 7e10, -0.0};
  const TextArray b = read_text_array(write(format_text_array(a)), {2, 3}, "x");
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(b.values, a.values);
}

TEST_F(ArrayFile, CommentsAndBlankLinesAreSkipped) {
  const TextArray b =
      read_text_array(write("# a comment\n\nshape 2 3\n1 2 3\n# mid\n4 5 6\n"), {2, 3}, "x");
  EXPECT_EQ(b.values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST_F(ArrayFile, EachDamageHasItsOwnMessageWithLine) {
  EXPECT_NE(error_of("shape 2 3\n1 2 3\n4 nan 6\n").find("a.txt:3: value 2 is NaN"),
            std::string::npos);
  EXPECT_NE(error_of("shape 2 3\n1 2 3\n4 inf 6\n").find("a.txt:3: value 2 is infinite"),
            std::string::npos);
  EXPECT_NE(error_of("shape 2 3\n1 2\n4 5 6\n").find("a.txt:2: wrong shape: 2 values"),
            std::string::npos);
  EXPECT_NE(error_of("shape 3 3\n1 2 3\n").find("a.txt:1: wrong shape (3, 3)"), std::string::npos);
  EXPECT_NE(error_of("shape 2 3\n1 2 3\n").find("wrong shape: file ends after 1 data lines"),
            std::string::npos);
  EXPECT_NE(error_of("shape 2 3\n1 2 3\n4 5 6\n7 8 9\n").find("a.txt:4: extra data line"),
            std::string::npos);
  EXPECT_NE(error_of("1 2 3\n").find("a.txt:1: expected a header line 'shape 2 3'"),
            std::string::npos);
  EXPECT_NE(error_of("shape 2 3\n1 2 x\n4 5 6\n").find("a.txt:2: value 3 ('x') is not a number"),
            std::string::npos);
}

TEST_F(ArrayFile, MissingFileIsAnInputError) {
  EXPECT_THROW(read_text_array(dir_ / "absent.txt", {2, 3}, "x"), InputError);
}

}  // namespace
}  // namespace normlab::particles
