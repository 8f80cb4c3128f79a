// libFuzzer harness: arbitrary bytes as an experiment file (TOML syntax, then every section
// read strictly, variants resolved, memory estimated). A normlab InputError or UsageError is
// the expected answer; any other exception, crash, leak, hang or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <toml++/toml.h>

#include "normlab/base/errors.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/toml_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  toml::table table;
  try {
    table = toml::parse(text, std::string_view("fuzz.toml"));
  } catch (const toml::parse_error&) {
    return 0;  // parse_toml_file turns this into an InputError with the line
  }
  try {
    normlab::TomlSection top(&table, "fuzz.toml", "top level");
    normlab::read_experiment(top, "fuzz.toml");
  } catch (const normlab::InputError&) {
  } catch (const normlab::UsageError&) {
  }
  return 0;
}
