#include "normlab/checkpoint.hpp"

#include <fmt/format.h>

#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "normlab/errors.hpp"
#include "normlab/model.hpp"
#include "normlab/safetensors.hpp"

namespace normlab {
namespace {

constexpr const char* kConfigKey = "normlab_config";
constexpr const char* kFormatKey = "normlab_format";
constexpr const char* kFormatVersion = "1";

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
  write_safetensors(path, file);
}

LoadedParams load_param_file(const std::filesystem::path& path, const ModelConfig* expected) {
  const std::string p = path.string();
  auto fail = [&](const std::string& problem) {
    return InputError(fmt::format("{}: {}", p, problem));
  };
  SafetensorsFile file = read_safetensors(path);
  auto it = file.metadata.find(kConfigKey);
  if (it == file.metadata.end()) {
    throw fail(fmt::format("no model config: __metadata__ has no '{}'", kConfigKey));
  }
  LoadedParams out;
  try {
    out.config = model_config_from_json(nlohmann::json::parse(it->second));
  } catch (const nlohmann::json::parse_error& e) {
    throw fail(fmt::format("the model config in __metadata__ is not valid JSON ({})", e.what()));
  } catch (const InputError& e) {
    throw fail(e.what());
  }
  if (expected != nullptr) {
    const std::string diff = first_difference(out.config, *expected);
    if (!diff.empty()) throw fail("the model config does not match: " + diff);
  }
  out.metadata = file.metadata;

  // The layout the config implies; every tensor must be in the file with its shape. A config
  // this build cannot construct is a property of the file (exit 1, named), not a usage error.
  std::unique_ptr<const Model<float>> reference;
  try {
    reference = std::make_unique<const Model<float>>(out.config);
  } catch (const UsageError& e) {
    throw fail(fmt::format("the stored model config cannot be built: {}", e.what()));
  } catch (const std::bad_alloc&) {
    throw fail(
        fmt::format("the stored model config (vocab {}, width {}, layers {}) is too large "
                    "to allocate",
                    out.config.vocab, out.config.width, out.config.layers));
  } catch (const std::length_error&) {
    throw fail(
        fmt::format("the stored model config (vocab {}, width {}, layers {}) is too large "
                    "to allocate",
                    out.config.vocab, out.config.width, out.config.layers));
  }
  const ParamLayout& layout = reference->layout();
  out.values.assign(layout.total(), 0.0f);
  for (const TensorSpec& spec : layout.tensors()) {
    const SafeTensor* t = file.find(spec.name);
    if (t == nullptr) {
      throw fail(fmt::format("missing tensor '{}' (shape {}) that the stored config needs",
                             spec.name, shape_string(spec.shape)));
    }
    if (t->shape != spec.shape) {
      throw fail(fmt::format("tensor '{}' has shape {} but the stored config needs {}", spec.name,
                             shape_string(t->shape), shape_string(spec.shape)));
    }
    std::copy(t->data.begin(), t->data.end(), out.values.begin() + spec.offset);
  }
  for (const SafeTensor& t : file.tensors) {
    if (layout.find(t.name) == nullptr) {
      throw fail(fmt::format("unexpected tensor '{}': the stored config's model has no such tensor",
                             t.name));
    }
  }
  return out;
}

void save_checkpoint(const std::filesystem::path& dir, const Model<float>& model) {
  save_param_file(dir / kModelFile, model.config(), model.layout(), model.params());
}

std::unique_ptr<Model<float>> load_checkpoint(const std::filesystem::path& dir,
                                              const ModelConfig* expected) {
  if (!std::filesystem::is_directory(dir)) {
    throw InputError(
        fmt::format("{}: not a checkpoint directory (no such directory)", dir.string()));
  }
  LoadedParams loaded = load_param_file(dir / kModelFile, expected);
  auto model = std::make_unique<Model<float>>(loaded.config);
  model->params() = std::move(loaded.values);
  return model;
}

}  // namespace normlab
