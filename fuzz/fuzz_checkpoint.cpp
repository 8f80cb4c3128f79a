// libFuzzer harness: arbitrary bytes as a checkpoint file (safetensors container, normlab
// metadata, stored config, tensor table). A normlab InputError or UsageError is the expected
// answer to a damaged file; any other exception, crash, leak, hang or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "normlab/base/errors.hpp"
#include "normlab/model/checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    normlab::parse_param_file(bytes, "fuzz.safetensors");
  } catch (const normlab::InputError&) {
  } catch (const normlab::UsageError&) {
  }
  return 0;
}
