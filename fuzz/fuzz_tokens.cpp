// libFuzzer harness: arbitrary bytes as the --tokens argument ("3 1 4 1 5").
#include <cstddef>
#include <cstdint>
#include <string>

#include "normlab/base/errors.hpp"
#include "token_list.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    normlab::cli::parse_token_list(text);
  } catch (const normlab::UsageError&) {
  }
  return 0;
}
