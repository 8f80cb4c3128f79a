// The safetensors file format (https://huggingface.co/docs/safetensors), float32 only:
//   8 bytes  little-endian u64 N, the header length
//   N bytes  JSON: {"NAME": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]},
//                   ..., "__metadata__": {"key": "string value", ...}}
//   data     raw little-endian float32, offsets relative to the start of this section
// Reading validates everything and reports each problem as one InputError line naming the
// file; nothing is ever half-written (temporary file, then rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace normlab {

struct SafeTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
};

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  std::vector<SafeTensor> tensors;  // in file order
  const SafeTensor* find(const std::string& name) const;
};

// Writes atomically. Tensor data sizes must match their shapes.
void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file);

// Reads and validates the container: size, header length, JSON, dtypes, shapes, offsets,
// non-finite values. Throws InputError "PATH: problem".
SafetensorsFile read_safetensors(const std::filesystem::path& path);

}  // namespace normlab
