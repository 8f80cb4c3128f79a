// The safetensors file format (https://huggingface.co/docs/safetensors), float32 (F32; float64,
// F64, is only written, by write_safetensors_f64):
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
  uint32_t data_crc32 = 0;          // CRC-32 (zlib) of the data section, set by the reader
  const SafeTensor* find(const std::string& name) const;
};

// Writes atomically. Tensor data sizes must match their shapes.
void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file);

// A float64 tensor, for files only other tools read (`normlab grads --double`).
struct SafeTensor64 {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<double> data;
};

// Writes float64 tensors (dtype F64) atomically. read_safetensors does not read them back.
void write_safetensors_f64(const std::filesystem::path& path,
                           const std::vector<SafeTensor64>& tensors);

// CRC-32 (zlib's) of the tensors' data in order: the data section write_safetensors writes.
uint32_t data_crc32(const std::vector<SafeTensor>& tensors);

// Reads and validates the container (docs/checkpoint.md, "What loading checks"): a regular
// file; the header length within the file and ending 8-byte aligned; JSON without duplicate
// keys; dtype F32; shapes; offsets that tile the data section exactly (sorted, contiguous, no
// overlap, no gap, nothing trailing); no NaN or Inf. Throws InputError "PATH: problem".
SafetensorsFile read_safetensors(const std::filesystem::path& path);
// The same checks of the header and the layout, reading only the first 8 + N bytes: a file
// whose size disagrees with its header (truncated, or far larger) is refused before its data
// is read. read_safetensors and load_param_file call it first.
void check_safetensors_layout(const std::filesystem::path& path);
// The same checks on bytes in memory; `source` names them in messages (the fuzz harness).
SafetensorsFile parse_safetensors(const std::string& bytes, const std::string& source);

}  // namespace normlab
