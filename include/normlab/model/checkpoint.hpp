// Model checkpoints: a directory holding model.safetensors (docs/checkpoint.md).
//
// Tensor names are the ParamLayout names; the full ModelConfig is stored as JSON in the
// header's __metadata__ under "normlab_config". Loading checks the file against the config it
// carries (and against an expected config when the caller has one): every tensor present,
// none extra, every shape right.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "normlab/model/model_config.hpp"
#include "normlab/model/param_layout.hpp"

namespace normlab {

template <typename T>
class Model;

inline const char* kModelFile = "model.safetensors";

// Writes one flat parameter buffer laid out by `layout` as a safetensors file, with `config`
// and any extra metadata in __metadata__. Atomic.
void save_param_file(const std::filesystem::path& path, const ModelConfig& config,
                     const ParamLayout& layout, const std::vector<float>& values,
                     const std::map<std::string, std::string>& extra_metadata = {});

struct LoadedParams {
  ModelConfig config;
  std::vector<float> values;  // laid out by the config's ParamLayout
  std::map<std::string, std::string> metadata;
};

// Reads a file written by save_param_file and validates it; with `expected`, the stored
// config must equal it. Throws InputError "PATH: problem".
LoadedParams load_param_file(const std::filesystem::path& path,
                             const ModelConfig* expected = nullptr);
// The same on the file's bytes in memory; `source` names them in messages.
LoadedParams parse_param_file(const std::string& bytes, const std::string& source,
                              const ModelConfig* expected = nullptr);

// DIR/model.safetensors.
void save_checkpoint(const std::filesystem::path& dir, const Model<float>& model);
// Loads DIR/model.safetensors into a new model.
std::unique_ptr<Model<float>> load_checkpoint(const std::filesystem::path& dir,
                                              const ModelConfig* expected = nullptr);

// The same into a Model<double>, every float32 value widened exactly (float64 cross-checks).
std::unique_ptr<Model<double>> load_checkpoint_double(const std::filesystem::path& dir,
                                                      const ModelConfig* expected = nullptr);

}  // namespace normlab
