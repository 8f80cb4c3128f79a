// Crafting safetensors files byte by byte, for tests of the loader's error handling.
//
// RawFile holds what the format holds (a header of tensor entries and __metadata__, then the
// data) without any of the reader's checks, so a test can break exactly one thing: a dtype, a
// shape, an offset, a value, the metadata, or the header itself.
#pragma once

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "normlab/model/model.hpp"

namespace normlab::testing {

struct RawTensor {
  std::string name;
  std::string dtype = "F32";
  std::vector<int64_t> shape;
  std::string bytes;  // the data as stored
  // Written instead of the computed [begin, end] when set.
  std::optional<nlohmann::json> offsets_override;
};

struct RawFile {
  nlohmann::ordered_json metadata = nlohmann::ordered_json::object();  // string values
  std::vector<RawTensor> tensors;

  RawTensor* find(const std::string& name) {
    for (RawTensor& t : tensors) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
  void erase(const std::string& name) {
    std::erase_if(tensors, [&](const RawTensor& t) { return t.name == name; });
  }
};

inline std::string float_bytes(const float* v, size_t n) {
  return std::string(reinterpret_cast<const char*>(v), n * sizeof(float));
}

// 8-byte little-endian length, the header, the data. The header is padded with spaces to a
// multiple of 8 like the writer does.
inline std::string assemble(const std::string& header_json, const std::string& data) {
  std::string json = header_json;
  while (json.size() % 8 != 0) json.push_back(' ');
  std::string out;
  const uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out + json + data;
}

inline std::string header_json(const RawFile& f) {
  nlohmann::ordered_json h;
  if (!f.metadata.empty()) h["__metadata__"] = f.metadata;
  uint64_t offset = 0;
  for (const RawTensor& t : f.tensors) {
    const uint64_t end = offset + t.bytes.size();
    h[t.name] = {{"dtype", t.dtype},
                 {"shape", t.shape},
                 {"data_offsets",
                  t.offsets_override ? *t.offsets_override : nlohmann::json::array({offset, end})}};
    offset = end;
  }
  return h.dump();
}

inline std::string build(const RawFile& f) {
  std::string data;
  for (const RawTensor& t : f.tensors) data += t.bytes;
  return assemble(header_json(f), data);
}

// The file save_checkpoint writes for `model`, as editable parts.
inline RawFile raw_from_model(const Model<float>& model) {
  RawFile f;
  f.metadata["normlab_config"] = to_json(model.config()).dump();
  f.metadata["normlab_format"] = "1";
  for (const TensorSpec& t : model.layout().tensors()) {
    f.tensors.push_back(
        {t.name, "F32", t.shape, float_bytes(model.params().data() + t.offset, t.size), {}});
  }
  return f;
}

}  // namespace normlab::testing
