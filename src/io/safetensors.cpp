#include "normlab/io/safetensors.hpp"

#include <fmt/format.h>

#include <zlib.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/json_file.hpp"
#include "normlab/io/printable.hpp"

namespace normlab {
namespace {

// "[12, 8]"; a shape of more than 8 dimensions (only a damaged file has one) is cut short.
std::string shape_string(const std::vector<int64_t>& shape) {
  if (shape.size() > 8) {
    return fmt::format("[{}, ... ({} dimensions)]",
                       fmt::join(shape.begin(), shape.begin() + 8, ", "), shape.size());
  }
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// zlib's CRC-32 of `crc` continued over n bytes (zlib takes lengths as uInt, so in chunks).
uint32_t crc32_update(uint32_t crc, const void* p, uint64_t n) {
  const auto* bytes = static_cast<const Bytef*>(p);
  uLong c = crc;
  while (n > 0) {
    const uInt chunk = static_cast<uInt>(std::min<uint64_t>(n, uint64_t(1) << 30));
    c = crc32(c, bytes, chunk);
    bytes += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(c);
}

// One tensor's [begin, end) in the data section.
struct ByteRange {
  uint64_t begin, end;
  std::string name;
};

// The tensors' byte ranges, sorted by start, must tile the data section exactly: the first
// starts at 0, each starts where the previous ends, the last ends at the section's end.
// So no two tensors share a byte, no byte is unused, and nothing trails the data.
template <typename Fail>
void check_ranges_tile(std::vector<ByteRange> ranges, uint64_t data_size, Fail fail) {
  std::stable_sort(ranges.begin(), ranges.end(),
                   [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
  uint64_t expected = 0;
  for (const ByteRange& r : ranges) {
    if (r.begin < expected) {
      throw fail(
          fmt::format("tensor '{}': data_offsets [{}, {}) overlap the previous tensor, "
                      "which ends at {}",
                      r.name, r.begin, r.end, expected));
    }
    if (r.begin > expected) {
      throw fail(
          fmt::format("tensor '{}': data_offsets [{}, {}) leave bytes [{}, {}) unused; "
                      "tensors must follow each other without gaps",
                      r.name, r.begin, r.end, expected, r.begin));
    }
    expected = r.end;
  }
  if (expected != data_size) {
    throw fail(
        fmt::format("{} bytes trail the last tensor: the data section has {} bytes but "
                    "the tensors cover {}",
                    data_size - expected, data_size, expected));
  }
}

// Parses the header JSON, refusing a key that appears twice in one object (nlohmann would keep
// the last silently). A syntax error names its byte, not the library's message.
template <typename Fail>
nlohmann::ordered_json parse_header(const std::string& text, Fail fail) {
  std::vector<std::set<std::string>> keys_per_object;
  auto on_event = [&](int /*depth*/, nlohmann::ordered_json::parse_event_t event,
                      nlohmann::ordered_json& parsed) {
    using Event = nlohmann::ordered_json::parse_event_t;
    if (event == Event::object_start) keys_per_object.emplace_back();
    if (event == Event::object_end) keys_per_object.pop_back();
    if (event == Event::key && !keys_per_object.back().insert(parsed.get<std::string>()).second) {
      throw fail(fmt::format("the header holds the key '{}' twice in one object",
                             printable(parsed.get<std::string>())));
    }
    return true;
  };
  try {
    return nlohmann::ordered_json::parse(text, on_event);
  } catch (const nlohmann::json::exception& e) {
    throw fail(fmt::format("the header is not valid JSON ({}; the header has {} bytes)",
                           json_parse_problem(e), text.size()));
  }
}

}  // namespace

const SafeTensor* SafetensorsFile::find(const std::string& name) const {
  for (const SafeTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

namespace {

// The header and data of tensors with `.name`, `.shape` and `.data` of one element type, that
// type's safetensors dtype name given.
template <typename Tensor>
std::string encode_safetensors(const std::map<std::string, std::string>& metadata,
                               const std::vector<Tensor>& tensors, const char* dtype) {
  using Value = typename decltype(Tensor::data)::value_type;
  nlohmann::ordered_json header;
  if (!metadata.empty()) {
    header["__metadata__"] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) header["__metadata__"][k] = v;
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors) {
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    if (count != static_cast<int64_t>(t.data.size())) {
      throw std::logic_error(fmt::format("tensor {} has {} values for shape {}", t.name,
                                         t.data.size(), shape_string(t.shape)));
    }
    const uint64_t bytes = t.data.size() * sizeof(Value);
    header[t.name] = {
        {"dtype", dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  while ((json.size() + 8) % 8 != 0) json.push_back(' ');  // align the data section
  std::string out;
  out.reserve(8 + json.size() + offset);
  const uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += json;
  for (const Tensor& t : tensors) {
    out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(Value));
  }
  return out;
}

}  // namespace

void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file) {
  write_file_atomic(path, encode_safetensors(file.metadata, file.tensors, "F32"));
}

void write_safetensors_f64(const std::filesystem::path& path,
                           const std::vector<SafeTensor64>& tensors) {
  write_file_atomic(path, encode_safetensors({}, tensors, "F64"));
}

uint32_t data_crc32(const std::vector<SafeTensor>& tensors) {
  uint32_t crc = 0;
  for (const SafeTensor& t : tensors) {
    crc = crc32_update(crc, t.data.data(), t.data.size() * sizeof(float));
  }
  return crc;
}

namespace {

// One tensor as the header lays it out: name and shape, and its bytes in the data section.
struct TensorLayout {
  SafeTensor tensor;  // data not yet read
  ByteRange bytes;
};

// The header's tensors and metadata, every field and offset checked against a data section of
// `data_size` bytes (the ranges tile it exactly), without reading the data.
template <typename Fail>
std::vector<TensorLayout> read_layout(const std::string& header_text, uint64_t data_size,
                                      std::map<std::string, std::string>& metadata, Fail fail) {
  const nlohmann::ordered_json header = parse_header(header_text, fail);
  if (!header.is_object()) throw fail("the header is not a JSON object");
  std::vector<TensorLayout> out;
  std::vector<ByteRange> ranges;
  for (const auto& item : header.items()) {
    const std::string& name = item.key();
    const nlohmann::ordered_json& entry = item.value();
    if (name == "__metadata__") {
      if (!entry.is_object()) throw fail("__metadata__ is not a JSON object");
      for (const auto& field : entry.items()) {
        const std::string& k = field.key();
        const nlohmann::ordered_json& v = field.value();
        if (!v.is_string())
          throw fail(fmt::format("__metadata__ value '{}' is not a string", printable(k)));
        metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
        !entry.contains("data_offsets")) {
      throw fail(fmt::format("tensor '{}' lacks dtype, shape or data_offsets", printable(name)));
    }
    if (!entry["dtype"].is_string())
      throw fail(fmt::format("tensor '{}': dtype is not a string", printable(name)));
    const std::string dtype = entry["dtype"].get<std::string>();
    if (dtype != "F32") {
      throw fail(fmt::format("tensor '{}' has dtype {}; normlab reads only F32", printable(name),
                             printable(dtype)));
    }
    SafeTensor t;
    t.name = name;
    const nlohmann::ordered_json& shape = entry["shape"];
    if (!shape.is_array())
      throw fail(fmt::format("tensor '{}': shape is not a list", printable(name)));
    for (const auto& d : shape) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) {
        throw fail(
            fmt::format("tensor '{}': shape holds a value that is not a size", printable(name)));
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
          throw fail(fmt::format("tensor '{}': shape {} is too large", printable(name),
                                 shape_string(t.shape)));
        }
        count *= dim;
      }
    }
    const nlohmann::ordered_json& off = entry["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned()) {
      throw fail(fmt::format("tensor '{}': data_offsets is not [begin, end]", printable(name)));
    }
    const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (end < begin || end - begin != static_cast<uint64_t>(count) * sizeof(float)) {
      throw fail(fmt::format("tensor '{}': data_offsets [{}, {}) do not hold shape {} ({} bytes)",
                             printable(name), begin, end, shape_string(t.shape),
                             count * sizeof(float)));
    }
    if (end > data_size) {
      throw fail(
          fmt::format("truncated: tensor '{}' needs bytes up to {} of the data section, "
                      "which has only {}",
                      printable(name), end, data_size));
    }
    ranges.push_back({begin, end, printable(name)});
    out.push_back({std::move(t), ranges.back()});
  }
  check_ranges_tile(ranges, data_size, fail);
  return out;
}

// Far above any header normlab writes (about 100 bytes per tensor), and small enough to read
// before the data is.
constexpr uint64_t kMaxHeaderBytes = uint64_t(1) << 27;

// The little-endian u64 header length at the start of `bytes` (at least 8 of them).
uint64_t header_length(const char* bytes) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  return n;
}

// The header's own checks on its length: within the `size` bytes of the file, 8-byte aligned.
template <typename Fail>
void check_header_length(uint64_t n, uint64_t size, Fail fail) {
  if (n > size - 8) {
    throw fail(
        fmt::format("truncated: the header says {} bytes of JSON but only {} follow", n, size - 8));
  }
  if (n > kMaxHeaderBytes) {
    throw fail(
        fmt::format("the header says {} bytes of JSON; a header is at most {} (about a "
                    "million tensors)",
                    n, kMaxHeaderBytes));
  }
  // The data section starts 8-byte aligned (the writer pads the header with spaces).
  if ((8 + n) % 8 != 0) {
    throw fail(
        fmt::format("the header length {} does not end on an 8-byte boundary "
                    "(8 + length must be a multiple of 8)",
                    n));
  }
}

}  // namespace

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  check_safetensors_layout(path);
  return parse_safetensors(read_file(path), path.string());
}

void check_safetensors_layout(const std::filesystem::path& path) {
  const std::string source = path.string();
  auto fail = [&](const std::string& problem) -> InputError {
    return InputError(fmt::format("{}: {}", source, problem));
  };
  const std::string head = read_file_head(path, 8);
  if (head.size() < 8) return;  // parse_safetensors says what is wrong with so short a file
  const uint64_t size = std::filesystem::file_size(path), n = header_length(head.data());
  check_header_length(n, size, fail);
  std::map<std::string, std::string> metadata;
  read_layout(read_file_head(path, 8 + n).substr(8), size - 8 - n, metadata, fail);
}

SafetensorsFile parse_safetensors(const std::string& bytes, const std::string& source) {
  auto fail = [&](const std::string& problem) -> InputError {
    return InputError(fmt::format("{}: {}", source, problem));
  };
  if (bytes.size() < 8) {
    throw fail(
        fmt::format("truncated: {} bytes, but the header length alone takes 8", bytes.size()));
  }
  const uint64_t n = header_length(bytes.data());
  check_header_length(n, bytes.size(), fail);
  const uint64_t data_size = bytes.size() - 8 - n;
  const char* data = bytes.data() + 8 + n;

  SafetensorsFile file;
  for (TensorLayout& l : read_layout(bytes.substr(8, n), data_size, file.metadata, fail)) {
    SafeTensor& t = l.tensor;
    const uint64_t begin = l.bytes.begin, end = l.bytes.end;
    t.data.resize((end - begin) / sizeof(float));
    // An empty tensor's data() may be null, which memcpy must not receive (found by fuzzing).
    if (end > begin) std::memcpy(t.data.data(), data + begin, end - begin);
    for (float v : t.data) {
      if (!std::isfinite(v)) throw fail(fmt::format("tensor '{}' holds NaN or Inf", l.bytes.name));
    }
    file.tensors.push_back(std::move(t));
  }
  file.data_crc32 = crc32_update(0, data, data_size);
  return file;
}

}  // namespace normlab
