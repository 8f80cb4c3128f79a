// read_json_file and parse_json_file (json_file.hpp): a damaged JSON file normlab wrote is one
// InputError of normlab's own that names the file, never the JSON library's text.
#include <gtest/gtest.h>

#include <string>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/json_file.hpp"
#include "support/cli.hpp"
#include "support/input_error.hpp"

namespace normlab {
namespace {

using testing::input_error;
using testing::TempDir;

TEST(JsonFile, WhatTheReaderMakesOfAGoodFile) {
  TempDir tmp;
  write_file_atomic(tmp / "a.json", R"({"step": 7})");
  EXPECT_EQ(read_json_file(tmp / "a.json",
                           [](const nlohmann::json& j) { return j.at("step").get<int>(); }),
            7);
}

TEST(JsonFile, AValueOfAnotherTypeNamesTheFileInNormlabsWords) {
  TempDir tmp;
  write_file_atomic(tmp / "state.json", R"({"step": "seven"})");
  const std::string m = input_error([&] {
    read_json_file(tmp / "state.json",
                   [](const nlohmann::json& j) { return j.at("step").get<int>(); });
  });
  EXPECT_NE(m.find((tmp / "state.json").string() + ": not as normlab writes it"), std::string::npos)
      << m;
  EXPECT_NE(m.find("type must be number, but is string"), std::string::npos) << m;
  EXPECT_EQ(m.find("json.exception"), std::string::npos) << m;
}

TEST(JsonFile, AMissingKeyNamesTheKey) {
  TempDir tmp;
  write_file_atomic(tmp / "run.json", "{}");
  const std::string m = input_error([&] {
    read_json_file(tmp / "run.json",
                   [](const nlohmann::json& j) { return j.at("status").get<std::string>(); });
  });
  EXPECT_NE(m.find("key 'status' not found"), std::string::npos) << m;
  EXPECT_EQ(m.find("json.exception"), std::string::npos) << m;
}

TEST(JsonFile, ASyntaxErrorSaysWhere) {
  TempDir tmp;
  write_file_atomic(tmp / "e.json", R"({"a": )");
  const std::string m = input_error([&] { parse_json_file(tmp / "e.json"); });
  EXPECT_NE(m.find((tmp / "e.json").string() + ": not valid JSON (syntax error at byte 7)"),
            std::string::npos)
      << m;
}

TEST(JsonFile, ANumberBeyondADoubleIsAnInputError) {
  // "1e999" is JSON syntax, but nlohmann refuses it with out_of_range, not parse_error.
  TempDir tmp;
  write_file_atomic(tmp / "e.json", R"({"a": 1e999})");
  const std::string m = input_error([&] { parse_json_file(tmp / "e.json"); });
  EXPECT_NE(
      m.find((tmp / "e.json").string() + ": not valid JSON (number overflow parsing '1e999')"),
      std::string::npos)
      << m;
}

}  // namespace
}  // namespace normlab
