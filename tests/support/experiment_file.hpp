// Reading an experiment file's text in tests: write it to a temporary e.toml and read it as
// `normlab run` would.
#pragma once

#include <fstream>
#include <string>

#include "normlab/errors.hpp"
#include "normlab/experiment.hpp"
#include "normlab/toml_reader.hpp"
#include "support/cli.hpp"

namespace normlab::testing {

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
