#include "normlab/safetensors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "normlab/atomic_file.hpp"
#include "normlab/errors.hpp"

namespace normlab {
namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace

const SafeTensor* SafetensorsFile::find(const std::string& name) const {
  for (const SafeTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file) {
  nlohmann::ordered_json header;
  if (!file.metadata.empty()) {
    header["__metadata__"] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : file.metadata) header["__metadata__"][k] = v;
  }
  uint64_t offset = 0;
  for (const SafeTensor& t : file.tensors) {
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    if (count != static_cast<int64_t>(t.data.size())) {
      throw std::logic_error(fmt::format("tensor {} has {} values for shape {}", t.name,
                                         t.data.size(), shape_string(t.shape)));
    }
    const uint64_t bytes = t.data.size() * sizeof(float);
    header[t.name] = {
        {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  while ((json.size() + 8) % 8 != 0) json.push_back(' ');  // align the data section
  std::string out;
  out.reserve(8 + json.size() + offset);
  const uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += json;
  for (const SafeTensor& t : file.tensors) {
    out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
  }
  write_file_atomic(path, out);
}

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  const std::string p = path.string();
  auto fail = [&](const std::string& problem) -> InputError {
    return InputError(fmt::format("{}: {}", p, problem));
  };
  if (!std::filesystem::exists(path)) throw fail("no such file");
  if (std::filesystem::is_directory(path)) throw fail("is a directory, not a safetensors file");
  const std::string bytes = read_file(path);
  if (bytes.size() < 8) {
    throw fail(
        fmt::format("truncated: {} bytes, but the header length alone takes 8", bytes.size()));
  }
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  if (n > bytes.size() - 8) {
    throw fail(fmt::format("truncated: the header says {} bytes of JSON but only {} follow", n,
                           bytes.size() - 8));
  }
  nlohmann::ordered_json header;  // ordered: tensors come back in file order
  try {
    header = nlohmann::ordered_json::parse(bytes.begin() + 8, bytes.begin() + 8 + n);
  } catch (const nlohmann::json::parse_error& e) {
    throw fail(fmt::format("the header is not valid JSON ({})", e.what()));
  }
  if (!header.is_object()) throw fail("the header is not a JSON object");
  const uint64_t data_size = bytes.size() - 8 - n;
  const char* data = bytes.data() + 8 + n;

  SafetensorsFile file;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw fail("__metadata__ is not a JSON object");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw fail(fmt::format("__metadata__ value '{}' is not a string", k));
        file.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
        !entry.contains("data_offsets")) {
      throw fail(fmt::format("tensor '{}' lacks dtype, shape or data_offsets", name));
    }
    if (!entry["dtype"].is_string())
      throw fail(fmt::format("tensor '{}': dtype is not a string", name));
    const std::string dtype = entry["dtype"].get<std::string>();
    if (dtype != "F32") {
      throw fail(fmt::format("tensor '{}' has dtype {}; normlab reads only F32", name, dtype));
    }
    SafeTensor t;
    t.name = name;
    const nlohmann::ordered_json& shape = entry["shape"];
    if (!shape.is_array()) throw fail(fmt::format("tensor '{}': shape is not a list", name));
    for (const auto& d : shape) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) {
        throw fail(fmt::format("tensor '{}': shape holds a value that is not a size", name));
      }
      t.shape.push_back(d.get<int64_t>());
    }
    // The number of values, refusing shapes whose byte size would overflow int64.
    int64_t count = 1;
    if (std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end()) {
      count = 0;
    } else {
      for (int64_t dim : t.shape) {
        if (count > std::numeric_limits<int64_t>::max() / int64_t(sizeof(float)) / dim) {
          throw fail(
              fmt::format("tensor '{}': shape {} is too large", name, shape_string(t.shape)));
        }
        count *= dim;
      }
    }
    const nlohmann::ordered_json& off = entry["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned()) {
      throw fail(fmt::format("tensor '{}': data_offsets is not [begin, end]", name));
    }
    const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (end < begin || end - begin != static_cast<uint64_t>(count) * sizeof(float)) {
      throw fail(fmt::format("tensor '{}': data_offsets [{}, {}) do not hold shape {} ({} bytes)",
                             name, begin, end, shape_string(t.shape), count * sizeof(float)));
    }
    if (end > data_size) {
      throw fail(
          fmt::format("truncated: tensor '{}' needs bytes up to {} of the data section, "
                      "which has only {}",
                      name, end, data_size));
    }
    t.data.resize(count);
    std::memcpy(t.data.data(), data + begin, end - begin);
    for (float v : t.data) {
      if (!std::isfinite(v)) throw fail(fmt::format("tensor '{}' holds NaN or Inf", name));
    }
    file.tensors.push_back(std::move(t));
  }
  return file;
}

}  // namespace normlab
