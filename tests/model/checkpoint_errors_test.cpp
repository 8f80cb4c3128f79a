// Every way a checkpoint can be broken, through `normlab forward --checkpoint DIR --tokens "1 2"`.
//
// Each case crafts one broken file (tests/support/safetensors_builder.hpp, or by cutting a
// valid file) and asserts: exit code 1, not a crash (no signal), nothing on stdout, and exactly
// one line on stderr that names the file and says what is wrong.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "support/cli.hpp"
#include "support/safetensors_builder.hpp"

namespace normlab {
namespace {

using testing::RawFile;
using testing::RunResult;
using testing::TempDir;

class CheckpointErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.vocab = 12;
    config_.width = 8;
    config_.heads = 2;
    config_.layers = 1;
    config_.mlp_mult = 2;
    model_ = std::make_unique<Model<float>>(config_);
    model_->init(5);
    save_checkpoint(dir_ / "valid", *model_);
    valid_ = testing::slurp(dir_ / "valid" / kModelFile);
  }

  // A fresh checkpoint directory holding `bytes` as its model file.
  std::filesystem::path with_file(const std::string& bytes) {
    const std::filesystem::path d = dir_ / ("case" + std::to_string(cases_++));
    testing::write_bytes(d / kModelFile, bytes);
    return d;
  }

  // Under a 2 GB address space and a kill guard: a file must never cost more than its size.
  RunResult forward(const std::filesystem::path& d) {
    return testing::run_normlab({"forward", "--checkpoint", d.string(), "--tokens", "1 2"}, {},
                                testing::kHostileInputLimits);
  }

  // Exit 1, no signal, no stdout, one stderr line holding `names` and every keyword.
  void expect_error(const std::filesystem::path& d, const std::string& names,
                    const std::vector<std::string>& keywords) {
    const RunResult r = forward(d);
    ASSERT_TRUE(r.exited) << r.describe();
    EXPECT_EQ(r.exit_code, 1) << r.describe();
    EXPECT_EQ(r.out, "") << r.describe();
    ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
    EXPECT_EQ(r.err.back(), '\n') << r.describe();
    EXPECT_NE(r.err.find(names), std::string::npos) << "message does not name " << names << "\n"
                                                    << r.describe();
    for (const std::string& k : keywords) {
      EXPECT_NE(r.err.find(k), std::string::npos) << "message lacks '" << k << "'\n"
                                                  << r.describe();
    }
  }
  void expect_file_error(const std::string& bytes, const std::vector<std::string>& keywords) {
    const std::filesystem::path d = with_file(bytes);
    expect_error(d, (d / kModelFile).string(), keywords);
  }

  uint64_t header_length() const {
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(valid_[i])) << (8 * i);
    return n;
  }
  RawFile raw() const { return testing::raw_from_model(*model_); }

  ModelConfig config_;
  std::unique_ptr<Model<float>> model_;
  TempDir dir_;
  std::string valid_;
  int cases_ = 0;
};

// The fixtures themselves are sound: the valid file and the builder's rendering of the same
// model both load, and give the same logits.
TEST_F(CheckpointErrors, ValidFilesLoad) {
  const RunResult a = forward(dir_ / "valid");
  ASSERT_TRUE(a.exited && a.exit_code == 0) << a.describe();
  EXPECT_NE(a.out.find("\"logits\""), std::string::npos);
  EXPECT_EQ(a.err, "");
  const RunResult b = forward(with_file(testing::build(raw())));
  ASSERT_TRUE(b.exited && b.exit_code == 0) << b.describe();
  EXPECT_EQ(a.out, b.out);
}

TEST_F(CheckpointErrors, EmptyFile) {
  expect_file_error("", {"truncated", "0 bytes"});
}

TEST_F(CheckpointErrors, TruncatedInsideTheLength) {
  for (size_t cut : {1, 4, 7}) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    expect_file_error(valid_.substr(0, cut), {"truncated", std::to_string(cut) + " bytes"});
  }
}

TEST_F(CheckpointErrors, TruncatedInsideTheHeader) {
  const uint64_t n = header_length();
  for (uint64_t cut : {uint64_t(8), 8 + n / 2, 8 + n - 1}) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    expect_file_error(valid_.substr(0, cut), {"truncated", "header"});
  }
}

TEST_F(CheckpointErrors, TruncatedInsideTheData) {
  const uint64_t n = header_length();
  const uint64_t data = valid_.size() - 8 - n;
  for (uint64_t keep : {uint64_t(0), uint64_t(3), data / 2, data - 1}) {
    SCOPED_TRACE("data bytes kept: " + std::to_string(keep));
    expect_file_error(valid_.substr(0, 8 + n + keep), {"truncated", "tensor '"});
  }
}

TEST_F(CheckpointErrors, HeaderLengthBeyondTheFile) {
  std::string bytes = valid_;
  for (int i = 0; i < 8; ++i) bytes[i] = char(0xff);  // 2^64 − 1
  expect_file_error(bytes, {"truncated", "18446744073709551615"});
}

TEST_F(CheckpointErrors, HeaderIsNotJson) {
  expect_file_error(testing::assemble("this is\nnot JSON {", ""), {"not valid JSON"});
}

TEST_F(CheckpointErrors, HeaderIsNotAnObject) {
  expect_file_error(testing::assemble("[1, 2, 3]", ""), {"not a JSON object"});
}

TEST_F(CheckpointErrors, WrongDtype) {
  RawFile f = raw();
  testing::RawTensor* t = f.find("embed.weight");
  t->dtype = "F16";
  t->bytes.resize(t->bytes.size() / 2);  // what a real F16 tensor would hold
  expect_file_error(testing::build(f), {"embed.weight", "F16", "F32"});
}

TEST_F(CheckpointErrors, MissingTensor) {
  RawFile f = raw();
  f.erase("layers.0.mlp.up.weight");
  expect_file_error(testing::build(f), {"missing tensor", "layers.0.mlp.up.weight", "[16, 8]"});
}

TEST_F(CheckpointErrors, ExtraTensor) {
  RawFile f = raw();
  f.tensors.push_back({"layers.1.attn.q.weight", "F32", {2}, std::string(8, '\0'), {}});
  expect_file_error(testing::build(f), {"unexpected tensor", "layers.1.attn.q.weight"});
}

TEST_F(CheckpointErrors, WrongShape) {
  RawFile f = raw();
  f.find("unembed.weight")->shape = {8, 12};  // transposed: the same number of values
  expect_file_error(testing::build(f), {"unembed.weight", "[8, 12]", "[12, 8]"});
}

TEST_F(CheckpointErrors, OffsetsThatDoNotHoldTheShape) {
  RawFile f = raw();
  f.find("final_norm.weight")->offsets_override = nlohmann::json::array({0, 4});
  expect_file_error(testing::build(f), {"final_norm.weight", "data_offsets"});
}

TEST_F(CheckpointErrors, NaNInATensor) {
  RawFile f = raw();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(f.find("layers.0.attn.k.weight")->bytes.data() + 12, &nan, sizeof nan);
  expect_file_error(testing::build(f), {"layers.0.attn.k.weight", "NaN"});
}

TEST_F(CheckpointErrors, InfinityInATensor) {
  RawFile f = raw();
  const float inf = -std::numeric_limits<float>::infinity();
  std::memcpy(f.find("embed.weight")->bytes.data(), &inf, sizeof inf);
  expect_file_error(testing::build(f), {"embed.weight", "Inf"});
}

// The config says width 16; the tensors were written for width 8, so no shape fits.
TEST_F(CheckpointErrors, ConfigDoesNotMatchTheTensors) {
  RawFile f = raw();
  ModelConfig edited = config_;
  edited.width = 16;
  f.metadata["normlab_config"] = to_json(edited).dump();
  expect_file_error(testing::build(f), {"embed.weight", "[12, 8]", "[12, 16]"});
}

TEST_F(CheckpointErrors, ConfigThatIsInvalid) {
  RawFile f = raw();
  nlohmann::json j = to_json(config_);
  j["heads"] = 3;  // does not divide width 8
  f.metadata["normlab_config"] = j.dump();
  expect_file_error(testing::build(f), {"model config", "heads must divide width"});
}

TEST_F(CheckpointErrors, ConfigWithAMissingField) {
  RawFile f = raw();
  nlohmann::json j = to_json(config_);
  j.erase("layers");
  f.metadata["normlab_config"] = j.dump();
  expect_file_error(testing::build(f), {"model config", "'layers'"});
}

TEST_F(CheckpointErrors, ConfigThatIsNotJson) {
  RawFile f = raw();
  f.metadata["normlab_config"] = "{width: 8";
  expect_file_error(testing::build(f), {"model config", "not valid JSON"});
}

TEST_F(CheckpointErrors, NoConfigAtAll) {
  RawFile f = raw();
  f.metadata.erase("normlab_config");
  expect_file_error(testing::build(f), {"no model config", "normlab_config"});
}

// A config of another scheme over this model's tensors: the AttnRes parameters the config
// implies are missing, and the message names the first.
TEST_F(CheckpointErrors, ConfigOfAnotherSchemeNeedsItsTensors) {
  RawFile f = raw();
  nlohmann::json j = to_json(config_);
  j["scheme"] = "attnres";
  f.metadata["normlab_config"] = j.dump();
  expect_file_error(testing::build(f), {"missing tensor", "layers.0.attn.res_query", "[8]"});
}

// A config whose parameter count exceeds what a vector can hold (the layout is built by
// allocating a model): a file error naming the file, not "std::bad_alloc". The size is chosen
// above vector::max_size(), so it fails before allocating anything on any machine.
// A config in range but far beyond memory (vocab 2^20 × width 2^16 is 256 GB per matrix):
// the tensor table is compared with the layout before anything is allocated.
TEST_F(CheckpointErrors, ConfigTooLargeToAllocate) {
  RawFile f = raw();
  nlohmann::json j = to_json(config_);
  j["vocab"] = 1 << 20;
  j["width"] = 1 << 16;
  j["heads"] = 1;
  j["mlp"] = false;
  f.metadata["normlab_config"] = j.dump();
  expect_file_error(testing::build(f), {"embed.weight", "[1048576, 65536]"});
}

// The issue-14 reproducers: one field of the stored config edited, the tensors kept. Every
// integer is read exactly (no truncation, no bool or float converted) and range-checked
// before anything is laid out.
TEST_F(CheckpointErrors, ConfigFieldsAreReadExactly) {
  struct Case {
    const char* field;
    nlohmann::json value;
    std::vector<std::string> keywords;
  };
  const std::vector<Case> cases = {
      {"layers", 1000000000, {"'layers'", "from 1 to 4096", "1000000000"}},
      {"max_len", 100000000, {"'max_len'", "100000000"}},
      {"mlp_mult", 1000000, {"'mlp_mult'", "from 1 to 64", "1000000"}},
      {"vocab", 4294967312ull, {"'vocab'", "4294967312"}},
      {"heads", true, {"'heads'", "integer", "true"}},
      {"block_size", 2.5, {"'block_size'", "integer", "2.5"}},
      {"mix_layers", -1e308, {"'mix_layers'", "integer"}},
      {"beta", "1", {"'beta'", "number"}},
      {"mlp", 1, {"'mlp'", "true or false"}},
      {"scheme", 3, {"'scheme'", "string"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.field);
    RawFile f = raw();
    nlohmann::json j = to_json(config_);
    j[c.field] = c.value;
    f.metadata["normlab_config"] = j.dump();
    expect_file_error(testing::build(f), c.keywords);
  }
}

TEST_F(CheckpointErrors, RealsMustBeFiniteAndInRange) {
  for (const auto& [field, value] : std::vector<std::pair<const char*, double>>{
           {"beta", 0.0}, {"norm_eps", -1e-5}, {"init_std", 0.0}, {"rope_base", 1.0}}) {
    SCOPED_TRACE(field);
    RawFile f = raw();
    nlohmann::json j = to_json(config_);
    j[field] = value;
    f.metadata["normlab_config"] = j.dump();
    expect_file_error(testing::build(f), {field, "finite number above"});
  }
}

TEST_F(CheckpointErrors, HeaderLengthNotAligned) {
  // The header one byte short of its padding: the data section would start unaligned.
  std::string bytes = valid_;
  const uint64_t n = header_length() - 1;
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  expect_file_error(bytes, {"8-byte boundary", std::to_string(n)});
}

TEST_F(CheckpointErrors, HeaderCutShort) {
  // A length one 8-byte step short: aligned, but the JSON ends early.
  std::string bytes = valid_;
  const uint64_t n = header_length() - 8;
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  expect_file_error(bytes, {"not valid JSON", "syntax error at byte"});
}

TEST_F(CheckpointErrors, NumberBeyondDoubleInHeader) {
  // Valid JSON syntax that nlohmann refuses with out_of_range, not parse_error.
  const std::string header = testing::header_json(raw());
  std::string data;
  for (const auto& t : raw().tensors) data += t.bytes;
  expect_file_error(testing::assemble("{\"x\":1e999," + header.substr(1), data),
                    {"the header is not valid JSON", "number overflow parsing '1e999'"});
}

TEST_F(CheckpointErrors, NumberBeyondDoubleInConfig) {
  RawFile f = raw();
  std::string config = to_json(config_).dump();
  config.insert(1, "\"x\":-1e999,");
  f.metadata["normlab_config"] = config;
  expect_file_error(testing::build(f), {"model config in __metadata__ is not valid JSON",
                                        "number overflow parsing '-1e999'"});
}

TEST_F(CheckpointErrors, DuplicateKey) {
  const std::string header = testing::header_json(raw());
  // A second copy of the first tensor's entry, at the front of the object.
  const nlohmann::ordered_json h = nlohmann::ordered_json::parse(header);
  const std::string first =
      h.contains("__metadata__") ? std::next(h.begin()).key() : h.begin().key();
  const std::string dup =
      "{" + nlohmann::json(first).dump() + ":" + h.at(first).dump() + "," + header.substr(1);
  std::string data;
  for (const auto& t : raw().tensors) data += t.bytes;
  expect_file_error(testing::assemble(dup, data), {"key '" + first + "' twice"});
}

TEST_F(CheckpointErrors, OverlappingTensors) {
  RawFile f = raw();
  // The second tensor starts 4 bytes inside the first; the data section loses 4 bytes.
  uint64_t end0 = f.tensors[0].bytes.size();
  f.tensors[1].offsets_override =
      nlohmann::json::array({end0 - 4, end0 - 4 + f.tensors[1].bytes.size()});
  for (size_t i = 2; i < f.tensors.size(); ++i) {
    uint64_t begin = 0;
    for (size_t k = 0; k < i; ++k) begin += f.tensors[k].bytes.size();
    f.tensors[i].offsets_override =
        nlohmann::json::array({begin - 4, begin - 4 + f.tensors[i].bytes.size()});
  }
  std::string data;
  for (const auto& t : f.tensors) data += t.bytes;
  data.resize(data.size() - 4);
  expect_file_error(testing::assemble(testing::header_json(f), data),
                    {f.tensors[1].name, "overlap"});
}

TEST_F(CheckpointErrors, GapBeforeTheFirstTensor) {
  RawFile f = raw();
  uint64_t begin = 4;
  for (auto& t : f.tensors) {
    t.offsets_override = nlohmann::json::array({begin, begin + t.bytes.size()});
    begin += t.bytes.size();
  }
  std::string data(4, '\0');
  for (const auto& t : f.tensors) data += t.bytes;
  expect_file_error(testing::assemble(testing::header_json(f), data),
                    {f.tensors[0].name, "unused", "[0, 4)"});
}

TEST_F(CheckpointErrors, TrailingBytes) {
  expect_file_error(valid_ + std::string(8, '\0'), {"8 bytes trail the last tensor"});
}

// A sound header followed by 3 GB (a sparse file): refused from the header and the file's size
// alone, under the 2 GB address space, before the data is read.
TEST_F(CheckpointErrors, AFileFarLargerThanItsHeaderSaysIsRefusedUnread) {
  const std::filesystem::path d = with_file(valid_);
  const uintmax_t large = uintmax_t(3) << 30;
  std::filesystem::resize_file(d / kModelFile, large);
  expect_error(d, (d / kModelFile).string(),
               {std::to_string(large - valid_.size()) + " bytes trail the last tensor"});
}

TEST_F(CheckpointErrors, FormatVersionMissingOrUnknown) {
  RawFile f = raw();
  f.metadata.erase("normlab_format");
  expect_file_error(testing::build(f), {"no 'normlab_format'", "not a normlab checkpoint"});
  f.metadata["normlab_format"] = "7";
  expect_file_error(testing::build(f), {"normlab_format is '7'", "only format 1"});
}

// save_checkpoint stores a CRC-32 of the data; one flipped bit of one weight is caught.
TEST_F(CheckpointErrors, FlippedDataBitFailsTheChecksum) {
  ASSERT_NE(valid_.find("normlab_data_crc32"), std::string::npos);
  std::string bytes = valid_;
  bytes[8 + header_length() + 5] ^= 0x01;
  expect_file_error(bytes, {"checksum", "damaged"});
}

TEST_F(CheckpointErrors, FifoAndDeviceAreRefusedNotRead) {
  const std::filesystem::path fifo_dir = dir_ / "fifo";
  std::filesystem::create_directories(fifo_dir);
  ASSERT_EQ(::mkfifo((fifo_dir / kModelFile).c_str(), 0600), 0);
  expect_error(fifo_dir, (fifo_dir / kModelFile).string(), {"not a regular file"});
  const std::filesystem::path device_dir = dir_ / "device";
  std::filesystem::create_directories(device_dir);
  std::filesystem::create_symlink("/dev/urandom", device_dir / kModelFile);
  expect_error(device_dir, (device_dir / kModelFile).string(), {"not a regular file"});
}

// Names come from the file: a control character in one must not break the one-line rule.
TEST_F(CheckpointErrors, TensorNameWithANewline) {
  RawFile f = raw();
  f.tensors.push_back({"evil\nname", "F32", {1}, std::string(4, '\0'), {}});
  expect_file_error(testing::build(f), {"unexpected tensor", "evil"});
}

TEST_F(CheckpointErrors, MissingDirectory) {
  const std::filesystem::path d = dir_ / "does_not_exist";
  expect_error(d, d.string(), {"no such checkpoint", "a run directory"});
}

TEST_F(CheckpointErrors, DirectoryWithoutModelFile) {
  const std::filesystem::path d = dir_ / "empty_dir";
  std::filesystem::create_directories(d);
  expect_error(d, (d / kModelFile).string(), {"no such file"});
}

TEST_F(CheckpointErrors, ModelFileIsADirectory) {
  const std::filesystem::path d = dir_ / "dir_as_file";
  std::filesystem::create_directories(d / kModelFile);
  expect_error(d, (d / kModelFile).string(), {"is a directory"});
}

}  // namespace
}  // namespace normlab
