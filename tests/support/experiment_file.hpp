// Reading an experiment file's text in tests: write it to a temporary e.toml and read it as
// `normlab run` would.
#pragma once

#include <fstream>
#include <string>

#include "normlab/base/errors.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/toml_reader.hpp"
#include "support/cli.hpp"

namespace normlab::testing {

// A valid experiment that runs in about a second: Set Complement(6), two schemes, two seeds,
// a one-layer width-5 model, 40 steps. Tests edit it or override it with --set.
inline const char* kTinyExperiment = R"toml(name = "tiny"
schemes = ["pre", "post"]
seeds = [1, 2]

[task]
name = "set_complement"
v = 6

[model]
width = 5
layers = 1
mlp = false

[train]
steps = 40
batch = 8
lengths = [1, 3]
lr = 0.01

[train.averaging]
gamma = 1.0

[eval]
lengths = [2, 5]
samples = 32
)toml";

// The error message of reading `text` ("" when valid, and then *out holds the experiment).
// With `keep_path` false the temporary file's path is cut from the front, leaving ":LINE: ...".
inline std::string experiment_error(const std::string& text, Experiment* out = nullptr,
                                    bool keep_path = false) {
  TempDir tmp;
  const auto path = tmp / "e.toml";
  std::ofstream(path) << text;
  try {
    auto table = parse_toml_file(path);
    TomlSection top(table.get(), path.string(), "top level");
    Experiment e = read_experiment(top, path.string());
    if (out != nullptr) *out = e;
    return "";
  } catch (const UsageError& e) {
    return keep_path ? e.what() : std::string(e.what()).substr(path.string().size());
  } catch (const InputError& e) {
    return keep_path ? e.what() : std::string(e.what()).substr(path.string().size());
  }
}

}  // namespace normlab::testing
