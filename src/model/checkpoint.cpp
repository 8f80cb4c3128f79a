#include "normlab/model/checkpoint.hpp"

#include <fmt/format.h>

#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/json_file.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/io/safetensors.hpp"
#include "normlab/model/model.hpp"

namespace normlab {
namespace {

constexpr const char* kConfigKey = "normlab_config";
constexpr const char* kFormatKey = "normlab_format";
constexpr const char* kFormatVersion = "1";
constexpr const char* kChecksumKey = "normlab_data_crc32";  // 8 hex digits; absent in old files

std::string shape_string(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// The first field where two configs differ, as "field: a vs b".
std::string first_difference(const ModelConfig& a, const ModelConfig& b) {
  const nlohmann::json ja = to_json(a), jb = to_json(b);
  for (const auto& [key, value] : ja.items()) {
    if (jb.at(key) != value) {
      return fmt::format("{} is {} in the file but {} was expected", key, value.dump(),
                         jb.at(key).dump());
    }
  }
  return "";
}

}  // namespace

void save_param_file(const std::filesystem::path& path, const ModelConfig& config,
                     const ParamLayout& layout, const std::vector<float>& values,
                     const std::map<std::string, std::string>& extra_metadata) {
  SafetensorsFile file;
  file.metadata = extra_metadata;
  file.metadata[kFormatKey] = kFormatVersion;
  file.metadata[kConfigKey] = to_json(config).dump();
  for (const TensorSpec& t : layout.tensors()) {
    file.tensors.push_back(
        {t.name, t.shape,
         std::vector<float>(values.begin() + t.offset, values.begin() + t.offset + t.size)});
  }
  file.metadata[kChecksumKey] = fmt::format("{:08x}", data_crc32(file.tensors));
  write_safetensors(path, file);
}

LoadedParams load_param_file(const std::filesystem::path& path, const ModelConfig* expected) {
  check_safetensors_layout(path);
  return parse_param_file(read_file(path), path.string(), expected);
}

LoadedParams parse_param_file(const std::string& bytes, const std::string& source,
                              const ModelConfig* expected) {
  auto fail = [&](const std::string& problem) {
    return InputError(fmt::format("{}: {}", source, problem));
  };
  SafetensorsFile file = parse_safetensors(bytes, source);
  const auto format = file.metadata.find(kFormatKey);
  if (format == file.metadata.end()) {
    throw fail(fmt::format("no '{}' in __metadata__: not a normlab checkpoint", kFormatKey));
  }
  if (format->second != kFormatVersion) {
    throw fail(fmt::format("{} is '{}', but this build reads only format {}", kFormatKey,
                           printable(format->second), kFormatVersion));
  }
  if (const auto sum = file.metadata.find(kChecksumKey); sum != file.metadata.end()) {
    const std::string actual = fmt::format("{:08x}", file.data_crc32);
    if (sum->second != actual) {
      throw fail(
          fmt::format("the data does not match its checksum ({} '{}', data {}): the "
                      "file is damaged",
                      kChecksumKey, printable(sum->second), actual));
    }
  }
  auto it = file.metadata.find(kConfigKey);
  if (it == file.metadata.end()) {
    throw fail(fmt::format("no model config: __metadata__ has no '{}'", kConfigKey));
  }
  nlohmann::json config_json;
  try {
    config_json = nlohmann::json::parse(it->second);
  } catch (const nlohmann::json::exception& e) {
    throw fail(fmt::format("the model config in __metadata__ is not valid JSON ({})",
                           json_parse_problem(e)));
  }
  LoadedParams out;
  try {
    out.config = model_config_from_json(config_json);
  } catch (const InputError& e) {
    throw fail(e.what());
  }
  if (expected != nullptr) {
    const std::string diff = first_difference(out.config, *expected);
    if (!diff.empty()) throw fail("the model config does not match: " + diff);
  }
  out.metadata = file.metadata;

  // The layout the config implies, computed without building a model: every tensor must be in
  // the file with its shape, and none extra, before anything the size of the model is
  // allocated. A config this build cannot construct is a property of the file (exit 1, named),
  // not a usage error.
  ParamLayout layout;
  try {
    layout = param_layout_of(out.config);
  } catch (const UsageError& e) {
    throw fail(fmt::format("the stored model config cannot be built: {}", e.what()));
  }
  // Name lookups through maps: a hostile file may hold many tensors.
  std::unordered_map<std::string, const SafeTensor*> in_file;
  for (const SafeTensor& t : file.tensors) in_file[t.name] = &t;
  std::unordered_set<std::string> expected_names;
  for (const TensorSpec& spec : layout.tensors()) {
    expected_names.insert(spec.name);
    const auto found = in_file.find(spec.name);
    if (found == in_file.end()) {
      throw fail(fmt::format("missing tensor '{}' (shape {}) that the stored config needs",
                             spec.name, shape_string(spec.shape)));
    }
    if (found->second->shape != spec.shape) {
      throw fail(fmt::format("tensor '{}' has shape {} but the stored config needs {}", spec.name,
                             shape_string(found->second->shape), shape_string(spec.shape)));
    }
  }
  for (const SafeTensor& t : file.tensors) {
    if (!expected_names.contains(t.name)) {
      throw fail(fmt::format("unexpected tensor '{}': the stored config's model has no such tensor",
                             printable(t.name)));
    }
  }
  // Every tensor matched, so the values take exactly the file's data bytes.
  out.values.assign(layout.total(), 0.0f);
  for (const TensorSpec& spec : layout.tensors()) {
    const std::vector<float>& data = in_file.at(spec.name)->data;
    std::copy(data.begin(), data.end(), out.values.begin() + spec.offset);
  }
  return out;
}

void save_checkpoint(const std::filesystem::path& dir, const Model<float>& model) {
  save_param_file(dir / kModelFile, model.config(), model.layout(), model.params());
}

namespace {

LoadedParams load_checkpoint_params(const std::filesystem::path& dir, const ModelConfig* expected) {
  if (!std::filesystem::is_directory(dir)) {
    throw InputError(
        fmt::format("{}: not a checkpoint directory (no such directory)", dir.string()));
  }
  return load_param_file(dir / kModelFile, expected);
}

}  // namespace

std::unique_ptr<Model<float>> load_checkpoint(const std::filesystem::path& dir,
                                              const ModelConfig* expected) {
  LoadedParams loaded = load_checkpoint_params(dir, expected);
  auto model = std::make_unique<Model<float>>(loaded.config);
  model->params() = std::move(loaded.values);
  return model;
}

std::unique_ptr<Model<double>> load_checkpoint_double(const std::filesystem::path& dir,
                                                      const ModelConfig* expected) {
  const LoadedParams loaded = load_checkpoint_params(dir, expected);
  auto model = std::make_unique<Model<double>>(loaded.config);
  model->params().assign(loaded.values.begin(), loaded.values.end());
  return model;
}

}  // namespace normlab
