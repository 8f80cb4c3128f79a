// The safetensors container (safetensors.hpp), below the checkpoint layer:
//   - write then read gives the same names, shapes, values (bit for bit), metadata and order,
//     including empty and 0-dimensional tensors, and the data section is 8-byte aligned;
//   - shapes whose size overflows, negative or non-integer sizes, bad offsets and unknown dtypes
//     are InputErrors naming the file and the tensor.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "normlab/base/errors.hpp"
#include "normlab/io/safetensors.hpp"
#include "support/cli.hpp"
#include "support/safetensors_builder.hpp"

namespace normlab {
namespace {

using testing::TempDir;

TEST(Safetensors, RoundTrip) {
  TempDir dir;
  SafetensorsFile f;
  f.metadata = {{"a", "1"}, {"b", "two words"}};
  f.tensors.push_back({"z.first", {2, 3}, {1.5f, -2.0f, 0.0f, -0.0f, 1e-38f, 3e38f}});
  f.tensors.push_back({"empty", {0, 4}, {}});
  f.tensors.push_back({"scalar", {}, {7.0f}});
  f.tensors.push_back({"a.last", {1}, {0.25f}});
  write_safetensors(dir / "t.safetensors", f);
  const std::string bytes = testing::slurp(dir / "t.safetensors");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  EXPECT_EQ((8 + n) % 8, 0u) << "data section not aligned";

  const SafetensorsFile g = read_safetensors(dir / "t.safetensors");
  EXPECT_EQ(g.metadata, f.metadata);
  ASSERT_EQ(g.tensors.size(), f.tensors.size());
  for (size_t i = 0; i < f.tensors.size(); ++i) {
    EXPECT_EQ(g.tensors[i].name, f.tensors[i].name) << "file order is kept";
    EXPECT_EQ(g.tensors[i].shape, f.tensors[i].shape);
    ASSERT_EQ(g.tensors[i].data.size(), f.tensors[i].data.size());
    EXPECT_EQ(std::memcmp(g.tensors[i].data.data(), f.tensors[i].data.data(),
                          f.tensors[i].data.size() * sizeof(float)),
              0);
  }
  EXPECT_NE(g.find("scalar"), nullptr);
  EXPECT_EQ(g.find("nope"), nullptr);
}

class SafetensorsErrors : public ::testing::Test {
 protected:
  // Reads a file made of one tensor entry; returns the InputError message ("" if none).
  std::string read_error(const nlohmann::json& entry, const std::string& data) {
    const std::filesystem::path p = dir_ / "bad.safetensors";
    nlohmann::json h;
    h["t"] = entry;
    testing::write_bytes(p, testing::assemble(h.dump(), data));
    try {
      read_safetensors(p);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(p.string() + ": ", 0), 0u) << "message must start with the file: " << msg;
      EXPECT_NE(msg.find("'t'"), std::string::npos) << "message must name the tensor: " << msg;
      return msg;
    }
    return "";
  }
  TempDir dir_;
};

TEST_F(SafetensorsErrors, ShapeWhoseSizeOverflows) {
  // 2^62 · 4 values = 2^64: the product wraps to 0 in 64 bits and would match offsets [0, 0].
  const std::string msg = read_error(
      {{"dtype", "F32"}, {"shape", {int64_t(1) << 62, 4}}, {"data_offsets", {0, 0}}}, "");
  EXPECT_NE(msg.find("too large"), std::string::npos) << msg;
}

TEST_F(SafetensorsErrors, NegativeOrFractionalSize) {
  EXPECT_NE(read_error({{"dtype", "F32"}, {"shape", {-1}}, {"data_offsets", {0, 4}}},
                       std::string(4, '\0'))
                .find("not a size"),
            std::string::npos);
  EXPECT_NE(read_error({{"dtype", "F32"}, {"shape", {1.5}}, {"data_offsets", {0, 4}}},
                       std::string(4, '\0'))
                .find("not a size"),
            std::string::npos);
}

TEST_F(SafetensorsErrors, OffsetsReversedOrMalformed) {
  EXPECT_NE(
      read_error({{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {4, 0}}}, std::string(8, '\0'))
          .find("data_offsets"),
      std::string::npos);
  EXPECT_NE(
      read_error({{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {0}}}, std::string(4, '\0'))
          .find("data_offsets"),
      std::string::npos);
  EXPECT_NE(read_error({{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {-4, 0}}},
                       std::string(4, '\0'))
                .find("data_offsets"),
            std::string::npos);
}

TEST_F(SafetensorsErrors, DtypesOtherThanF32) {
  for (const char* dtype : {"F16", "BF16", "F64", "I32"}) {
    const std::string msg = read_error({{"dtype", dtype}, {"shape", {1}}, {"data_offsets", {0, 4}}},
                                       std::string(4, '\0'));
    EXPECT_NE(msg.find(dtype), std::string::npos) << msg;
    EXPECT_NE(msg.find("only F32"), std::string::npos) << msg;
  }
}

TEST_F(SafetensorsErrors, EntryWithoutShape) {
  EXPECT_NE(
      read_error({{"dtype", "F32"}, {"data_offsets", {0, 4}}}, std::string(4, '\0')).find("lacks"),
      std::string::npos);
}

// A tensor with no values (shape [0], offsets [0, 0]) is a valid container entry; reading it
// must not hand memcpy a null pointer (UBSan found that by fuzzing).
TEST(Safetensors, EmptyTensorReadsAsNoValues) {
  const std::string header = R"({"empty":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}})";
  const SafetensorsFile f = parse_safetensors(testing::assemble(header, ""), "mem");
  ASSERT_EQ(f.tensors.size(), 1u);
  EXPECT_EQ(f.tensors[0].shape, std::vector<int64_t>{0});
  EXPECT_TRUE(f.tensors[0].data.empty());
}

}  // namespace
}  // namespace normlab
